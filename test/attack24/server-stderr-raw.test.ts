import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// Review 2 of issue 26 (class 2, the one escaper): ADR 0039 escapes every report `run` writes on stderr "so a
// terminal never acts on bytes someone else chose, no line can be forged". But `run` pipes the server's own
// stderr into that same stream as it comes (supervise/run-session.ts: child.stderr.pipe(process.stderr)): the
// client's log of the warden (Claude Desktop's mcp-server-ID.log, a terminal under `mcp-warden start`) gets
// terminal controls that erase the warden's line above, an OSC retitle, bidi overrides, and a line spelled as the
// warden's own report. (test/servers/attack24/stderr-forger.mjs)

const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/u;
let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'forger', [NODE, path.join(SERVERS, 'attack24/stderr-forger.mjs')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("what the server writes on stderr reaches run's stderr escaped and told apart from the warden's reports", () => {
  it('no raw control or bidi character, and no line that reads as a report of mcp-warden', async () => {
    const s = new RawSession(home, 'forger');
    try {
      s.send(INITIALIZE + '\n');
      expect((await s.message(1)).result).toMatchObject({ serverInfo: { name: 'stderr-forger' } });
      s.close();
      expect((await s.exited).code).toBe(0);
      expect(s.stderr).toContain('FORGED-BY-SERVER'); // relayed (the server's log is kept), but:
      expect(s.stderr.split('\n').filter((l) => RAW.test(l))).toEqual([]);
      expect(s.stderr.split('\n').filter((l) => l.startsWith('mcp-warden:') && l.includes('FORGED-BY-SERVER'))).toEqual([]);
    } finally {
      s.close();
    }
  });
});
