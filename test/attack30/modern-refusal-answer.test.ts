import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, cli, tempDir } from '../helpers/warden.js';
import { answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, seventh closing review (noticed beside the roads before the judge). A 2025 client whose server is
// refused gets the warden's sentence as the error of its initialize ("mcp-warden closed the session: server 'ID'
// was refused: ..."). On a 2026-07-28 connection the request that builds the judge is not yet forwarded, so it
// is no request "still waiting" when the session closes (Session.fail): it gets no answer at all, and the
// client sees only the end of the stream.

let dir: string;
let home: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  const scenario = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenario, JSON.stringify({ unlockable: true }));
  const add = cli(home, ['add', 'unlocked', '--yes', '--env', `SCENARIO_FILE=${scenario}`, '--', NODE, path.join(SERVERS, 'attack30/before-judge.mjs')]);
  expect(add.stdout + add.stderr).toContain('could not be locked');
  fs.writeFileSync(scenario, '{}');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a 2026-07-28 request whose judge refuses the server', () => {
  it("is answered with the warden's refusal", async () => {
    const s = new RawSession(home, 'unlocked');
    try {
      s.send(modernLine(1, 'tools/list'));
      const answer = await answerTo(s, 1);
      expect(answer.result).toBeUndefined();
      expect((answer.error as { message: string; data: { cause: string } }).message).toMatch(/^mcp-warden closed the session: server 'unlocked' was refused: it has no entry in tools\.lock/);
    } finally {
      s.close();
      await s.exited;
    }
  });
});
