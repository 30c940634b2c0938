import fs from 'node:fs';
import { escaped, escapedJson } from '../escape.js';
import { oneLine, type AlertEvent } from './event.js';

// Alert sinks. Each sends one event and resolves, or rejects with a reason; the dispatcher reports failures
// and never lets a sink crash or block `run`.

export type SinkConfig =
  | { type: 'stderr' }
  | { type: 'webhook'; url: string; timeoutMs: number; retries: number }
  | { type: 'exec'; command: string[]; timeoutMs: number }
  | { type: 'journald'; socket?: string };

export type Send = (e: AlertEvent) => Promise<void>;

function stderrSink(): Send {
  return async (e) => void process.stderr.write(oneLine(e) + '\n');
}

function webhookSink(c: { url: string; timeoutMs: number; retries: number }): Send {
  return async (e) => {
    let last = '';
    for (let attempt = 0; attempt <= c.retries; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 200 * 2 ** (attempt - 1)));
      try {
        const res = await fetch(c.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: escapedJson(JSON.stringify(e)), signal: AbortSignal.timeout(c.timeoutMs), redirect: 'error' });
        await res.arrayBuffer();
        if (res.ok) return;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).name === 'TimeoutError' ? `no answer within ${c.timeoutMs} ms` : (err as Error).message;
      }
    }
    throw new Error(`webhook ${new URL(c.url).origin} failed after ${c.retries + 1} attempt(s): ${last}`);
  };
}

function execSink(c: { command: string[]; timeoutMs: number }): Send {
  return async (e) => {
    const { execa } = await import('execa');
    const [file, ...args] = c.command as [string, ...string[]];
    const r = await execa(file, args, { input: escapedJson(JSON.stringify(e)) + '\n', timeout: c.timeoutMs, reject: false, stdout: 'ignore', stderr: 'pipe', env: { PATH: '/usr/local/bin:/usr/bin:/bin' }, extendEnv: false });
    if (r.timedOut) throw new Error(`exec ${file} did not finish within ${c.timeoutMs} ms`);
    if (r.exitCode !== 0) throw new Error(`exec ${file} exited ${r.exitCode ?? r.signal}: ${String(r.stderr).slice(0, 200)}`);
  };
}

const JOURNAL = '/run/systemd/journal/socket';

/** journald: the journal's native socket through logger(1), or a syslog datagram socket (RFC 5424). */
function journaldSink(c: { socket?: string }, note: (m: string) => void): Send {
  const socket = c.socket ?? (fs.existsSync(JOURNAL) ? undefined : fs.existsSync('/dev/log') ? '/dev/log' : null);
  if (socket === null) {
    note('the journald alert sink found no journal (/run/systemd/journal/socket, /dev/log): its alerts go nowhere');
    return async () => {};
  }
  return async (e) => {
    const { execa } = await import('execa');
    const message = oneLine(e);
    const r = socket === undefined
      ? await execa('/usr/bin/logger', ['--journald'], { input: `MESSAGE=${message}\nSYSLOG_IDENTIFIER=mcp-warden\nMCP_WARDEN_EVENT=${e.event}\nMCP_WARDEN_SERVER=${'server' in e ? escaped(String(e.server)) : ''}\nPRIORITY=4\n`, reject: false, timeout: 2000 })
      : await execa('/usr/bin/logger', ['--socket', socket, '--socket-errors=on', '--rfc5424', '--tag', 'mcp-warden', '--priority', 'user.warning', '--', message], { reject: false, timeout: 2000 });
    if (r.exitCode !== 0) throw new Error(`logger failed (${r.exitCode ?? r.signal}): ${String(r.stderr).slice(0, 200)}`);
  };
}

export function makeSink(c: SinkConfig, note: (m: string) => void): { name: string; send: Send } {
  switch (c.type) {
    case 'stderr':
      return { name: 'stderr', send: stderrSink() };
    case 'webhook':
      return { name: `webhook ${new URL(c.url).origin}`, send: webhookSink(c) };
    case 'exec':
      return { name: `exec ${c.command[0]}`, send: execSink(c) };
    case 'journald':
      return { name: 'journald', send: journaldSink(c, note) };
  }
}
