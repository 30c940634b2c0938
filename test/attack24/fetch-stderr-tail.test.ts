import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';

// A failed surface fetch (add, lock, verify, diff) quotes the end of the server's stderr in its refusal: through
// the one escaper (ADR 0039), in double quotes, on the refusal's own line. (test/servers/attack24/stderr-quitter.mjs)

const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/u;
let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  expect(cli(home, ['add', 'quitter', '--yes', '--', NODE, path.join(SERVERS, 'attack24/stderr-quitter.mjs')]).code).toBe(3);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("the end of a server's stderr in a failed fetch's refusal", () => {
  it('is quoted escaped on the refusal line: no raw control or bidi character, no line of its own', () => {
    const r = cli(home, ['lock', 'quitter']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      `mcp-warden: PROTOCOL_FAILURE: could not fetch the surface of server 'quitter': the server closed its stdout. Its stderr ended with: "\\u001b[1A\\u001b[2K\\rmcp-warden: server 'quitter' verified (FORGED-BY-SERVER)\\n\\u202eFORGED-BIDI \\"quoted\\""\n`,
    );
    expect(r.stderr.split('\n').filter((l) => RAW.test(l))).toEqual([]);
    expect(r.stderr.split('\n').filter((l) => !l.startsWith('mcp-warden: PROTOCOL_FAILURE') && l.includes('FORGED'))).toEqual([]);
  });
});
