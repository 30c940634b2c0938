import fs from 'node:fs';
import path from 'node:path';
import { SERVERS, type RawSession } from './warden.js';

// The module guard's gate (docs/adr/0019-fast-launch.md), seen from outside: a server's node started by `run`
// and waiting, before any server code, in read(2) on its file descriptor 3.

/** read(2)'s number in /proc/PID/syscall, per architecture. */
const READ_SYSCALL = process.arch === 'arm64' ? '63' : '0';

/** The server's process (its command line names `script`), once its main thread is blocked reading fd 3;
 *  undefined when the session ends first or after 30 s. Polls /proc: there is no event to wait for. */
export async function blockedAtGate(script: string, session: RawSession): Promise<number | undefined> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && session.proc.exitCode === null) {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (!fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(script)) continue;
        const call = fs.readFileSync(`/proc/${entry}/syscall`, 'utf8').split(' ');
        if (call[0] === READ_SYSCALL && call[1] === '0x3') return Number(entry);
      } catch {
        // gone, or not ours to read
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return undefined;
}

/**
 * Lays out in `pkg` a package ('gated', or `name`) whose server, server.mjs (returned), writes 'server code ran' to
 * `marker` at its first statement (to the file WARDEN_TEST_MARKER names, when set, without `marker`: for a package
 * enrolled once per run), then serves test/servers/basic.mjs. With `bigBytes`, a sparse data.bin (`big`) of that
 * size: a large one makes digesting the tree take a while, the window in which node is up and waiting at the gate.
 */
export function gatedPackage(pkg: string, opts: { marker?: string; bigBytes?: number; name?: string } = {}): { server: string; big: string } {
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: opts.name ?? 'gated', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  fs.copyFileSync(path.join(SERVERS, 'basic.mjs'), path.join(pkg, 'basic.mjs'));
  const server = path.join(pkg, 'server.mjs');
  const mark = opts.marker === undefined ? 'if (process.env.WARDEN_TEST_MARKER) fs.writeFileSync(process.env.WARDEN_TEST_MARKER' : `fs.writeFileSync(${JSON.stringify(opts.marker)}`;
  fs.writeFileSync(server, `import fs from 'node:fs';\n${mark}, 'server code ran');\nawait import('./basic.mjs');\n`);
  const big = path.join(pkg, 'data.bin');
  if (opts.bigBytes !== undefined) {
    fs.writeFileSync(big, '');
    fs.truncateSync(big, opts.bigBytes);
  }
  return { server, big };
}
