import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownCgroup, writableCgroup } from '../helpers/cgroup.js';
import { requireHost } from '../helpers/host.js';
import { INITIALIZE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// docs/adr/0033-held-server-joins-its-cgroup.md: a node server behind the module guard's gate joins its session's
// cgroup after spawn, off the warden's thread, and the gate opens only once it has; any other server is born in
// it. Each server here writes the cgroup it is in as the first thing its own code does.

let home: string;
const report = (id: string): string => path.join(home, `${id}.cgroup`);

beforeAll(() => {
  home = tempDir();
  addServer(home, 'node-held', [process.execPath, path.join(SERVERS, 'cgroup-at-start.mjs'), report('node-held')]);
  requireHost('python3');
  addServer(home, 'python-born', ['python3', path.join(SERVERS, 'cgroup-at-start.py'), report('python-born')]);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

/** The cgroup the server `id` reported at its start, in a session of its own; the session is closed after. */
async function cgroupAtStart(id: string): Promise<{ reported: string; wardenPid: number }> {
  fs.rmSync(report(id), { force: true });
  const s = new RawSession(home, id);
  s.send(INITIALIZE + '\n');
  await s.message(1);
  const reported = fs.readFileSync(report(id), 'utf8').trim();
  s.close();
  expect((await s.exited).code).toBe(0);
  return { reported, wardenPid: s.proc.pid as number };
}

describe("a server's first code runs in its session's cgroup", () => {
  const own = ownCgroup() as string;
  const expected = (wardenPid: number): RegExp | string =>
    writableCgroup() ? new RegExp(`^${path.posix.join(own, `mcp-warden-${wardenPid}-`)}[0-9a-f]{16}$`) : own;

  it('a node server held at the gate has joined it before its first line of code', async () => {
    const { reported, wardenPid } = await cgroupAtStart('node-held');
    expect(reported).toMatch(expected(wardenPid));
    const exit = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'node-held').pop();
    if (writableCgroup()) expect(exit?.containment).toContain('cgroup');
  });

  it('a server that is not held (python) is born in it', async () => {
    const { reported, wardenPid } = await cgroupAtStart('python-born');
    expect(reported).toMatch(expected(wardenPid));
  });
});
