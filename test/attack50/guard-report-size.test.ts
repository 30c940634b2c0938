import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opened, request } from '../helpers/surface.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// The module guard's report file (fd 4 of a node server) is read whole at the session's end
// (src/launch/module-guard.ts readAll: a Buffer of the file's fstat size, then one string). The server can
// ftruncate that descriptor: a sparse 1 TiB file (no disk, no time) makes the warden's Buffer.alloc throw, so
// stopLaunched (src/supervise/attested-launch.ts) throws before the session's `exit` event, and every refusal
// the guard recorded (module_refused, an alert) is lost with it. Truncating to 0 erases them instead: O_APPEND
// stops neither. Either way a server hides from the operator the module load its guard refused.

const SERVER = path.join(SERVERS, 'attack50', 'report-grow.mjs');
const MODULE = '/srv/drifted-module.js';

let dir: string;
let home: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'grow', [NODE, SERVER]);
}, 60_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function session(size: number): Promise<{ code: number | null; events: Record<string, unknown>[] }> {
  const before = auditEvents(home).length;
  const s = new RawSession(home, 'grow');
  await opened(s);
  const r = await request(s, 'tools/call', { name: 'poke', arguments: { refused: MODULE } });
  expect(r.result).toBeDefined();
  const g = await request(s, 'tools/call', { name: 'poke', arguments: { size } });
  expect(g.result).toBeDefined();
  s.close();
  const exit = await s.exited;
  return { code: exit.code, events: auditEvents(home).slice(before) };
}

describe('the guard report file grown or cut by the server', () => {
  it('a report file grown to a sparse 1 TiB still ends the session with its exit event and the refused module recorded', async () => {
    const { events } = await session(2 ** 40);
    expect(events.filter((e) => e.event === 'exit' && e.server === 'grow')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'module_refused').map((e) => e.module)).toEqual([MODULE]);
    expect(events.filter((e) => e.event === 'guard_report_overflow')).toMatchObject([{ server: 'grow', why: 'grew', bytes: 2 ** 40 }]);
  }, 60_000);

  it('a report file cut to 0 bytes after a refusal still has the refused module recorded (or the cut itself)', async () => {
    const { events } = await session(0);
    expect(events.filter((e) => e.event === 'exit' && e.server === 'grow')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'module_refused').map((e) => e.module)).toEqual([MODULE]);
    expect(events.filter((e) => e.event === 'guard_report_overflow')).toMatchObject([{ server: 'grow', why: 'shrank' }]);
  }, 60_000);
});
