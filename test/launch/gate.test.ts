import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, addServer, alive, auditEvents, tempDir } from '../helpers/warden.js';
import { blockedAtGate, gatedPackage } from '../helpers/gate.js';

// The module guard's gate (docs/adr/0019-fast-launch.md): node running a server script is started as soon as the
// interpreter is judged, and its script and package tree are digested while it starts. The server's node waits
// on its file descriptor 3 until the warden writes the attested set there; none of the server's code may run
// before that, and none at all when the verdict is a refusal.

/** A sparse data file of the package: digesting its tree takes a while, the window in which node waits at the gate. */
const BIG = 512 * 1024 * 1024;

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-gate-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the gate: node starts before the verdict, the server code after it', () => {
  it('holds the server at the gate while its package tree is digested, then ends it unrun when the tree changed since it was allowlisted', async () => {
    const marker = path.join(dir, 'ran');
    const { server, big } = gatedPackage(path.join(dir, 'pkg'), { marker, bigBytes: BIG });
    expect(addServer(home, 'gated', [NODE, server]).code).toBe(0);
    fs.rmSync(marker, { force: true }); // an observed enrollment's write may not have reached it (docs/adr/0063)
    const fd = fs.openSync(big, 'r+');
    fs.writeSync(fd, 'x', 0); // the tree's digest no longer matches the allowlist (and cannot come from the cache)
    fs.closeSync(fd);

    const s = new RawSession(home, 'gated');
    s.send(INITIALIZE + '\n');
    const pid = await blockedAtGate(server, s);
    const answer = await s.message(1);
    const { code } = await s.exited;

    expect(pid, 'the server was started before the verdict and waited at the gate').toBeTypeOf('number');
    expect((answer.error as { data: { code: string } }).data.code).toBe('DIGEST_MISMATCH');
    expect(code).toBe(3);
    expect(fs.existsSync(marker), 'no server code ran').toBe(false);
    expect(alive(pid as number)).toBe(false);
    const refusal = auditEvents(home).filter((e) => e.event === 'launch').at(-1);
    expect(refusal).toMatchObject({ decision: 'refuse', code: 'DIGEST_MISMATCH', pid });
  });

  it('releases an unchanged server once its tree is judged: the code runs and the client is answered', async () => {
    const marker = path.join(dir, 'ran');
    const { server } = gatedPackage(path.join(dir, 'pkg'), { marker, bigBytes: 0 });
    expect(addServer(home, 'gated', [NODE, server]).code).toBe(0);
    fs.rmSync(marker, { force: true }); // an observed enrollment's write may not have reached it (docs/adr/0063)

    const s = new RawSession(home, 'gated');
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    await s.exited;
    expect(answer.result).toBeDefined();
    expect(fs.readFileSync(marker, 'utf8')).toBe('server code ran');
  });
});
