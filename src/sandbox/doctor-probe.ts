import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { Engine } from './engine.js';

// The real probes of `doctor` (sandbox/doctor.ts): each a short bwrap run with the flags the sandbox uses
// (sandbox/plan.ts), bounded by PROBE_MS, whose command inside checks what the level promises. Nothing of a
// server runs; the probes' commands are fixed strings of the warden.

/** How long one probe may take before it is killed and reported as failed. */
export const PROBE_MS = 5000;
const MAX_OUT = 4096;

export interface Probe {
  ok: boolean;
  /** Why it failed (bwrap's or the check's own words, bounded), absent when ok. */
  detail?: string;
}

/** The flags every sandbox gets (sandbox/plan.ts bwrapArgs). */
const BASE = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--cap-drop', 'ALL'];
const VIEW = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];

const root = (): boolean => process.getuid?.() === 0;
const cut = (s: string): string => s.trim().slice(0, 300);

/** The network namespace the warden runs in, as the kernel names it ("net:[4026531840]"). */
const hostNetns = (): string => fs.readlinkSync('/proc/self/ns/net');

function run(file: string, args: string[], opts: { uid?: number; gid?: number } = {}): Probe & { out: string } {
  const r = spawnSync(file, args, { encoding: 'utf8', timeout: PROBE_MS, killSignal: 'SIGKILL', maxBuffer: MAX_OUT, env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.error) return { ok: false, detail: cut(r.error.message), out: '' };
  if (r.status !== 0) return { ok: false, detail: cut(r.stderr || `exited ${r.status ?? r.signal}`), out: r.stdout };
  return { ok: true, out: r.stdout };
}

/** Level none and loopback (the same namespace: its own loopback, nothing else): a network namespace other than
 *  the host's whose only interface is `lo`, up with 127.0.0.1. */
export function probeNetwork(engine: Engine): Probe {
  const check = 'readlink /proc/self/ns/net; cat /proc/net/dev; echo --; cat /proc/net/fib_trie';
  const r = run(engine.file, [...BASE, '--unshare-net', ...VIEW, '--', '/bin/sh', '-c', check]);
  if (!r.ok) return { ok: false, ...(r.detail ? { detail: r.detail } : {}) };
  const [head = '', trie = ''] = r.out.split('\n--\n');
  const [ns, ...rest] = head.split('\n');
  if (ns === hostNetns()) return { ok: false, detail: "the sandbox ran in the host's network namespace" };
  const ifaces = rest.filter((l) => /^\s*[^\s|]+:/.test(l)).map((l) => l.trim().split(':')[0]);
  if (ifaces.some((i) => i !== 'lo')) return { ok: false, detail: `the sandbox's namespace has interfaces besides lo: ${ifaces.join(', ')}` };
  if (!trie.includes('127.0.0.1')) return { ok: false, detail: "the sandbox's loopback is not up (no 127.0.0.1)" };
  return { ok: true };
}

/** The file view: `hide` (the user's home, the warden's home) empty under a tmpfs, / read-only. */
export function probeFiles(engine: Engine, hide: string[]): Probe {
  const dirs = [...new Set(['/home', '/root', ...hide])].filter((d) => fs.statSync(d, { throwIfNoEntry: false })?.isDirectory());
  const check = 'for d in "$@"; do [ -z "$(ls -A "$d")" ] || { echo "$d is visible" >&2; exit 1; }; done; if (: > /.mcp-warden-doctor) 2>/dev/null; then echo "/ is writable" >&2; exit 1; fi';
  const r = run(engine.file, [...BASE, '--unshare-net', ...VIEW, ...dirs.flatMap((d) => ['--tmpfs', d]), ...dirs.flatMap((d) => ['--remount-ro', d]), '--', '/bin/sh', '-c', check, 'sh', ...dirs]);
  return r.ok ? { ok: true } : { ok: false, ...(r.detail ? { detail: r.detail } : {}) };
}

/** As root: the same network probe run as nobody (65534), which needs user namespaces: whether a warden that is
 *  not root could confine on this host. Undefined when the warden is not root (its probes are unprivileged). */
export function probeUnprivileged(engine: Engine): Probe | undefined {
  if (!root()) return undefined;
  const r = run(engine.file, ['--unshare-user', ...BASE, '--unshare-net', '--ro-bind', '/', '/', '--proc', '/proc', '--', '/bin/true'], { uid: 65534, gid: 65534 });
  return r.ok ? { ok: true } : { ok: false, ...(r.detail ? { detail: r.detail } : {}) };
}

/** Level domains (sandbox/egress.ts): bwrap makes the namespace, reports it (--info-fd) and waits (--block-fd);
 *  nsenter enters it (and its user namespace when bwrap made one) and finds the namespace bwrap reported. */
export async function probeDomains(engine: Engine, nsenter: Engine): Promise<Probe> {
  const userns = root() ? [] : ['--unshare-user', '--uid', '0', '--gid', '0'];
  const child = spawn(engine.file, [...BASE, '--unshare-net', ...userns, ...VIEW, '--info-fd', '3', '--block-fd', '4', '--', '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
  const info = child.stdio[3] as Readable;
  const block = child.stdio[4] as Writable;
  block.on('error', () => {});
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-MAX_OUT)));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_MS);
  try {
    let text = '';
    for await (const d of info) {
      text += (d as Buffer).toString('utf8');
      if (text.length > MAX_OUT) break;
      try {
        JSON.parse(text);
        break;
      } catch {
        // not complete yet
      }
    }
    let reported: { 'child-pid'?: unknown; 'net-namespace'?: unknown };
    try {
      reported = JSON.parse(text) as typeof reported;
    } catch {
      child.kill('SIGKILL');
      await exited;
      return { ok: false, detail: cut(stderr || 'bubblewrap reported no namespace') };
    }
    const pid = Number(reported['child-pid']);
    const want = `net:[${String(reported['net-namespace'])}]`;
    const sameUserNs = fs.statSync(`/proc/${pid}/ns/user`).ino === fs.statSync('/proc/self/ns/user').ino;
    const entered = run(nsenter.file, [...(sameUserNs ? [] : [`--user=/proc/${pid}/ns/user`, '--preserve-credentials']), `--net=/proc/${pid}/ns/net`, '--', '/bin/sh', '-c', 'readlink /proc/self/ns/net']);
    block.end('go');
    const code = await exited;
    if (!entered.ok) return { ok: false, detail: `nsenter could not enter the sandbox's namespace: ${entered.detail ?? ''}` };
    if (entered.out.trim() !== want) return { ok: false, detail: 'nsenter entered another namespace than the one bubblewrap reported' };
    if (code !== 0) return { ok: false, detail: cut(stderr || `bubblewrap exited ${code}`) };
    return { ok: true };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** `bwrap --version`'s words ("bubblewrap 0.8.0"), or undefined. */
export function engineVersion(engine: Engine): string | undefined {
  const r = run(engine.file, ['--version']);
  return r.ok ? cut(r.out) : undefined;
}
