import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, ROOT, tempDir } from '../helpers/warden.js';

// verifyExecuted, on real processes: a shell shim that exec'd node is reported as what it is (EXEC_HANDED_OFF,
// naming what runs and the command to enroll instead), while a file replaced between digest and exec is still
// EXEC_MISMATCH. Both are refusals.

type Key = Record<string, string>;
const { verifyExecuted } = (await import(path.join(ROOT, 'dist/launch/spawn.js'))) as {
  verifyExecuted: (pid: number, expected: Key, file: string, context?: { serverId: string; script?: string }) => void;
};
const { statKey } = (await import(path.join(ROOT, 'dist/attest/stat-key.js'))) as { statKey: (st: fs.BigIntStats) => Key };

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => (dir = tempDir()));
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

function caught(fn: () => void): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
}

async function untilExe(pid: number, pred: (exe: string) => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if (pred(fs.readlinkSync(`/proc/${pid}/exe`))) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`/proc/${pid}/exe never matched`);
}

// The shim pnpm writes into node_modules/.bin (abridged: the NODE_PATH lines are left out).
const PNPM_SHIM = `#!/bin/sh
basedir=$(dirname "$(echo "$0" | sed -e 's,\\\\,/,g')")

case \`uname\` in
    *CYGWIN*) basedir=\`cygpath -w "$basedir"\`;;
esac

if [ -x "$basedir/node" ]; then
  exec "$basedir/node"  "$basedir/../srv/bin/server.js" "$@"
else
  exec node  "$basedir/../srv/bin/server.js" "$@"
fi
`;

describe('verifyExecuted', () => {
  it('says that a shell shim exec\'d node, and how to enroll the real command', async () => {
    const bin = path.join(dir, 'node_modules', '.bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.mkdirSync(path.join(dir, 'node_modules', 'srv', 'bin'), { recursive: true });
    const server = path.join(dir, 'node_modules', 'srv', 'bin', 'server.js');
    fs.writeFileSync(server, 'setTimeout(() => {}, 20000);\n');
    const shim = path.join(bin, 'srv');
    fs.writeFileSync(shim, PNPM_SHIM, { mode: 0o755 });
    const sh = fs.realpathSync('/bin/sh');
    const key = statKey(fs.statSync(sh, { bigint: true }));
    const child = spawn(sh, [shim], { env: { PATH: `${path.dirname(NODE)}:/usr/local/bin:/usr/bin:/bin` }, stdio: 'ignore' });
    children.push(child);
    const node = fs.realpathSync(NODE);
    await untilExe(child.pid as number, (exe) => exe === node);
    const err = caught(() => verifyExecuted(child.pid as number, key, sh, { serverId: 'srv', script: shim }));
    expect(err.code).toBe('EXEC_HANDED_OFF');
    expect(err.message).toContain(`exec'd another program, ${node}`);
    expect(err.message).toContain(shim);
    expect(err.message).not.toMatch(/replaced between digest and exec/);
    expect(err.message).toContain(`mcp-warden add srv -- ${node} ${fs.realpathSync(server)}`);
  });

  it('tells the user where to look when the shim is not one it recognizes', async () => {
    const shim = path.join(dir, 'launcher');
    fs.writeFileSync(shim, '#!/bin/sh\nset -- "$@"\nexec sleep 20\n', { mode: 0o755 });
    const sh = fs.realpathSync('/bin/sh');
    const child = spawn(sh, [shim], { env: { PATH: '/usr/bin:/bin' }, stdio: 'ignore' });
    children.push(child);
    const sleep = fs.realpathSync('/usr/bin/sleep');
    await untilExe(child.pid as number, (exe) => exe === sleep);
    const err = caught(() => verifyExecuted(child.pid as number, statKey(fs.statSync(sh, { bigint: true })), sh, { serverId: 'x', script: shim }));
    expect(err.code).toBe('EXEC_HANDED_OFF');
    expect(err.message).toContain(`exec'd another program, ${sleep}`);
    expect(err.message).toMatch(new RegExp(`look in ${shim.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} for the command it runs`));
  });

  it('still says "replaced between digest and exec" when the digested path now holds another inode', async () => {
    const prog = path.join(dir, 'prog');
    fs.copyFileSync('/usr/bin/sleep', prog);
    fs.chmodSync(prog, 0o755);
    const digested = statKey(fs.statSync(prog, { bigint: true }));
    // Replaced by rename (another inode at the same path) after the digest, before the exec.
    fs.copyFileSync('/usr/bin/sleep', `${prog}.new`);
    fs.chmodSync(`${prog}.new`, 0o755);
    fs.renameSync(`${prog}.new`, prog);
    const child = spawn(prog, ['20'], { stdio: 'ignore' });
    children.push(child);
    await untilExe(child.pid as number, (exe) => exe === prog);
    const err = caught(() => verifyExecuted(child.pid as number, digested, prog, { serverId: 'p' }));
    expect(err.code).toBe('EXEC_MISMATCH');
    expect(err.message).toMatch(/replaced between digest and exec/);
  });

  it('treats a directory swapped for a symlink (another path, digested file no longer there) as a replacement', async () => {
    const real = path.join(dir, 'real');
    fs.mkdirSync(real);
    fs.copyFileSync('/usr/bin/sleep', path.join(real, 'prog'));
    fs.chmodSync(path.join(real, 'prog'), 0o755);
    const file = path.join(real, 'prog');
    const digested = statKey(fs.statSync(file, { bigint: true }));
    const evil = path.join(dir, 'evil');
    fs.mkdirSync(evil);
    fs.copyFileSync('/usr/bin/sleep', path.join(evil, 'prog'));
    fs.chmodSync(path.join(evil, 'prog'), 0o755);
    fs.renameSync(real, path.join(dir, 'real.old'));
    fs.symlinkSync(evil, real);
    const child = spawn(file, ['20'], { stdio: 'ignore' });
    children.push(child);
    await untilExe(child.pid as number, (exe) => exe === path.join(evil, 'prog'));
    const err = caught(() => verifyExecuted(child.pid as number, digested, file, { serverId: 'p' }));
    expect(err.code).toBe('EXEC_MISMATCH');
    expect(err.message).toMatch(/replaced between digest and exec/);
  });
});
