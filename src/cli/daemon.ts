import { refuseIfPreloaded } from '../attest/self.js';
import { runDaemon } from '../daemon/daemon.js';
import { notifierFromEnv } from '../daemon/notify.js';
import { WardenError } from '../error.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { escaped } from '../escape.js';

// `mcp-warden daemon [--listen HOST:PORT]`: checks the home and the address, then runs the daemon
// (daemon/daemon.ts) in the foreground until SIGTERM or SIGINT.

const say = (m: string): void => void process.stderr.write(`mcp-warden daemon: ${escaped(m)}\n`);

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Parses --listen HOST:PORT, refusing anything but a loopback address. */
function parseListen(listen: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(listen);
  const host = m?.[1] ?? '';
  const port = Number(m?.[2]);
  if (!m || !LOOPBACK.test(host) || port > 65535) {
    throw new WardenError('USAGE', `--listen ${listen}: expected a loopback HOST:PORT such as 127.0.0.1:9464 (metrics and status are never served beyond this machine).`);
  }
  return { host, port };
}

export async function daemonVerb(homeFlag: string | undefined, listen: string): Promise<number> {
  // First, so that nothing this process starts can inherit NOTIFY_SOCKET or WATCHDOG_*.
  const notify = notifierFromEnv(process.env, say);
  refuseIfPreloaded(); // it launches servers for its scheduled verifications
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  return runDaemon(paths, parseListen(listen), notify);
}
