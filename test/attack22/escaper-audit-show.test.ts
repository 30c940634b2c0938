import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opened, request } from '../helpers/surface.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, cli, tempDir } from '../helpers/warden.js';

// `audit show` prints what others chose: the name of a tool a client (a steered model) called, and the lines a
// server writes to the module guard's report descriptor. A newline in such a value would print a second,
// forged event line; an escape sequence would act on the operator's terminal; tag characters would hide text.
// Every string shown goes through the one escaper (src/escape.ts), in the human and in the --json output.

const HOSTILE = path.join(SERVERS, 'attack22', 'escaper-hostile.mjs');
const FORGED = '2026-12-02T00:00:00Z  launch             hostile  decision=allow';
const TAGS = String.fromCodePoint(...[...'IGNORE'].map((c) => 0xe0000 + c.charCodeAt(0)));
const CLIENT_NAME = `x\n${FORGED}\u001b]0;owned\u0007\u001b[2J${TAGS}`;
const GUARD_LINE = `/tmp/m.mjs\n${FORGED}\u009b31m\u202e${TAGS}`;
/** What a terminal acts on or does not show: C0 but the line ends, DEL, C1, bidi, zero-width, tags. */
const HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u;

let dir: string;
let home: string;
beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'hostile', [NODE, HOSTILE]);
  const s = new RawSession(home, 'hostile');
  await opened(s);
  const refused = await request(s, 'tools/call', { name: CLIENT_NAME, arguments: {} });
  expect((refused.error as { code: number }).code).toBe(-32001);
  const forged = await request(s, 'tools/call', { name: 'read_file', arguments: { line: GUARD_LINE } });
  expect(forged.result).toBeDefined();
  s.close();
  await s.exited;
  // The values are in the log as they were received: the audit log is JSON and keeps them whole.
  expect(auditEvents(home).find((e) => e.event === 'call_refused')?.tool).toBe(CLIENT_NAME);
  expect(auditEvents(home).find((e) => e.event === 'module_refused')?.module).toBe(GUARD_LINE);
}, 60_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('audit show', () => {
  it("prints a client's tool name and a guard report line escaped, on one event line each, with no forged line", () => {
    const r = cli(home, ['audit', 'show']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines.filter((l) => l.startsWith('2026-12-02T00:00:00Z'))).toEqual([]);
    expect(r.stdout).not.toMatch(HIDDEN);
    const call = lines.filter((l) => / call_refused /.test(l));
    expect(call).toHaveLength(1);
    expect(call[0]).toContain('tool=x\\u000a2026-12-02T00:00:00Z  launch');
    expect(call[0]).toContain('\\u001b]0;owned\\u0007\\u001b[2J\\u{e0049}\\u{e0047}\\u{e004e}\\u{e004f}\\u{e0052}\\u{e0045}');
    const guard = lines.filter((l) => / module_refused /.test(l));
    expect(guard).toHaveLength(1);
    expect(guard[0]).toContain('module=/tmp/m.mjs\\u000a2026-12-02T00:00:00Z');
    expect(guard[0]).toContain('\\u009b31m\\u202e\\u{e0049}');
  });

  it('--json keeps the values whole for a script and shows none of their invisible characters raw', () => {
    const r = cli(home, ['audit', 'show', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(HIDDEN);
    const events = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(events.find((e) => e.event === 'call_refused')?.tool).toBe(CLIENT_NAME);
    expect(events.find((e) => e.event === 'module_refused')?.module).toBe(GUARD_LINE);
  });
});
