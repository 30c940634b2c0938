import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type net from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { AuditEvent } from '../audit/events.js';
import { WardenError } from '../error.js';
import { escaped } from '../escape.js';
import type { Engine } from './engine.js';
import { EgressProxy, type EgressDenial } from './egress-proxy.js';
import type { DecoyRead } from './decoys.js';
import type { DomainGrant } from './schema.js';
import type { GuardDenial, GuardRead } from '../launch/guard-denials.js';
import type { DeniedWrite } from './write-trace.js';

// The network of a server with `network: { domains }` (docs/adr/0060-egress-proxy.md). bwrap gives it a network
// namespace of its own, as for `none`, and waits (--block-fd) once it is made, before it runs the server. The
// warden then starts its own node inside that namespace only (nsenter --net, plus --user when bwrap made a user
// namespace: an unprivileged warden owns it), which listens on the namespace's 127.0.0.1:PROXY_PORT and hands
// the listening socket to the warden over its IPC channel and exits. The warden accepts on that socket in its
// own process, where the proxy connects out from the host's namespace; no process of the warden's stays in the
// sandbox, and the socket is closed with the session. Only then is bwrap released to start the server.

/** The port of the proxy on the sandbox's own loopback. */
export const PROXY_PORT = 3128;
/** How long the namespace's details and the listener may take. */
const SETUP_MS = 10_000;
const MAX_INFO = 4096;

/** The environment that points a server at the proxy (node >= 24.5 and 22.21 read it for fetch and http with
 *  NODE_USE_ENV_PROXY=1; older nodes ignore it: docs/guide.md "Confining a server"). */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: '', no_proxy: '', NODE_USE_ENV_PROXY: '1' };
}

/** bwrap's options for it: report the sandbox's pids on `infoFd`, wait for a byte on `blockFd` before the server. */
export const egressArgs = (infoFd: number, blockFd: number): string[] => ['--info-fd', String(infoFd), '--block-fd', String(blockFd)];

// Run by the warden's node inside the namespace: listen, check it is the namespace bwrap reported, hand the
// socket over, exit (also when the warden goes away first).
const LISTENER = `
const fs = require('node:fs'), net = require('node:net');
process.on('disconnect', () => process.exit(1));
const [port, ns] = process.argv.slice(1);
if (String(fs.statSync('/proc/self/ns/net').ino) !== ns) { process.send({ error: 'another network namespace than the sandbox\\'s' }); process.exit(1); }
const s = net.createServer();
s.once('error', (e) => { process.send({ error: String(e.code || e.message) }); process.exit(1); });
s.listen({ host: '127.0.0.1', port: Number(port), exclusive: true }, () => process.send({ ok: true }, s, () => process.exit(0)));
`;

export interface Egress {
  close(): void;
}

function unavailable(id: string, what: string): WardenError {
  return new WardenError('SANDBOX_UNAVAILABLE', `the network proxy of server '${id}' could not be started: ${what}. The server was not run (never with the host's network); see docs/guide.md, "Confining a server".`);
}

/** The JSON bwrap writes on --info-fd (bounded). */
function readInfo(info: Readable, id: string): Promise<{ pid: number; netns: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(unavailable(id, `bubblewrap reported no namespace within ${SETUP_MS / 1000} s`)), SETUP_MS);
    const done = (err?: Error, v?: { pid: number; netns: string }): void => {
      clearTimeout(timer);
      info.removeAllListeners('data');
      info.destroy();
      if (err) reject(err);
      else resolve(v as { pid: number; netns: string });
    };
    info.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      if (text.length > MAX_INFO) return done(unavailable(id, 'bubblewrap reported more than expected'));
      try {
        const j = JSON.parse(text) as Record<string, unknown>;
        if (!Number.isSafeInteger(j['child-pid']) || !Number.isSafeInteger(j['net-namespace'])) return done(unavailable(id, 'bubblewrap reported no network namespace'));
        done(undefined, { pid: j['child-pid'] as number, netns: String(j['net-namespace']) });
      } catch {
        // not complete yet
      }
    });
    info.once('end', () => done(unavailable(id, 'bubblewrap exited before it made the namespace (its message is in the server\'s stderr)')));
    info.once('error', () => done(unavailable(id, 'bubblewrap\'s report could not be read')));
  });
}

/** A listening socket in the namespace of process `pid`, made there by the warden's node under nsenter. */
function listenIn(nsenter: Engine, pid: number, netns: string, id: string): Promise<net.Server> {
  const sameUserNs = fs.statSync(`/proc/${pid}/ns/user`).ino === fs.statSync('/proc/self/ns/user').ino;
  const args = [...(sameUserNs ? [] : [`--user=/proc/${pid}/ns/user`, '--preserve-credentials']), `--net=/proc/${pid}/ns/net`, '--', process.execPath, '-e', LISTENER, String(PROXY_PORT), netns];
  return new Promise((resolve, reject) => {
    const child = spawn(nsenter.file, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: {} });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-512)));
    const timer = setTimeout(() => fail(`no listener within ${SETUP_MS / 1000} s`), SETUP_MS);
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(unavailable(id, why));
    };
    child.once('error', (e) => fail(`${nsenter.file}: ${e.message}`));
    child.once('exit', (code) => fail(`${nsenter.file} exited (${code ?? 'signal'})${stderr ? `: ${stderr.trim()}` : ''}`));
    child.on('message', (m: { ok?: boolean; error?: string }, handle?: net.Server) => {
      if (settled) return;
      if (!m?.ok || !handle) return fail(`the listener failed: ${m?.error ?? 'no socket'}`);
      settled = true;
      clearTimeout(timer);
      resolve(handle);
    });
  });
}

/**
 * Starts the proxy of a sandbox whose bwrap reports on `info` and waits on `block`: refuses with
 * SANDBOX_UNAVAILABLE when it cannot (the caller ends the session; bwrap never ran the server).
 */
export async function startEgress(opts: { id: string; nsenter: Engine; info: Readable; block: Writable; grants: readonly DomainGrant[]; denied: (d: EgressDenial) => void }): Promise<Egress> {
  const { pid, netns } = await readInfo(opts.info, opts.id);
  const listener = await listenIn(opts.nsenter, pid, netns, opts.id);
  const proxy = new EgressProxy({ grants: opts.grants, denied: opts.denied });
  proxy.serve(listener);
  opts.block.on('error', () => {});
  opts.block.end('go');
  return {
    close: () => {
      listener.close();
      proxy.close();
    },
  };
}

/** sandbox_denied events recorded in a session (each an audit event, a metric and an alert), the same bound
 *  as catalog drifts: the server chooses how often it asks; past it, one `reports_capped` event and the rest
 *  refused as always, not recorded. Connections the proxy refused, decoys read and denied writes share it. */
export const DENIALS_RECORDED = 64;

/** What the sandbox of server `id` refused (its proxy, a write the kernel refused) or saw (a decoy read), as audit
 *  events (bounded), and a line for the operator. */
export function recordDenials(id: string, record: (e: AuditEvent) => unknown, say: (m: string) => void): (d: EgressDenial | DecoyRead | DeniedWrite | GuardDenial | GuardRead) => void {
  let seen = 0;
  return (d) => {
    if (++seen > DENIALS_RECORDED) {
      if (seen === DENIALS_RECORDED + 1) {
        void record({ event: 'reports_capped', server: id, report: 'sandbox_denied', cap: DENIALS_RECORDED });
        say(`server '${id}': its sandbox refused or saw more than ${DENIALS_RECORDED} attempts in this session; further ones are not recorded one by one.`);
      }
      return;
    }
    void record({ event: 'sandbox_denied', server: id, ...d });
    if (d.kind === 'write') say(`server '${id}': its sandbox refused a write (${d.call}, ${d.errno}) to ${escaped(JSON.stringify(d.path))}${d.truncated ? ' (cut)' : ''}, the path as the server gave it${'source' in d ? ' (reported by its own node: the module guard)' : ''}. If it needs to write there, grant it with: mcp-warden sandbox ${id} --allow-write PATH`);
    else if (d.kind === 'read' && d.reason === 'guard') say(`server '${id}': it tried to read ${escaped(d.path)}, hidden by its sandbox (it found no such file), as its own node reported it (the module guard). If it needs that file, grant it with: mcp-warden sandbox ${id} --allow-read PATH`);
    else if (d.kind === 'read') say(`server '${id}': it read ${escaped(d.path)}, a decoy the warden placed in its sandbox (it got an empty file, never the real one). If it needs that file, grant it with: mcp-warden sandbox ${id} --allow-read PATH`);
    else if (d.reason === 'not_granted') say(`server '${id}': its sandbox refused a connection to ${escaped(d.host)}:${d.port} (not granted). Grant it with: mcp-warden sandbox ${id} --allow-domain NAME[:PORT]`);
    else say(`server '${id}': its sandbox refused a connection to ${escaped(d.host)}:${d.port}: the name resolved to ${d.address === undefined ? 'an address' : escaped(d.address)}, ${d.reason === 'loopback_address' ? 'this host\'s own loopback' : 'not a public address'}. A granted name must resolve to public addresses only (docs/guide.md, "Confining a server"); check the name's DNS.`);
  };
}
