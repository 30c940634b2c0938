import { createRequire } from 'node:module';
import { WardenError } from '../error.js';

// sd_notify(3): the daemon tells systemd it is ready (READY=1), reloading, stopping, and alive (WATCHDOG=1).
// The protocol is one AF_UNIX datagram per message to $NOTIFY_SOCKET, sent by the main process itself: with
// the default NotifyAccess=main systemd drops datagrams from any other pid, so a helper such as
// systemd-notify(1) would need NotifyAccess=all and still race its own exit. Node has no AF_UNIX datagram
// socket, hence the small native module unix-dgram, loaded only when $NOTIFY_SOCKET is set (ADR 0009).
//
// The variables are removed from this process's environment once read, so nothing launched later (servers
// of scheduled checks, exec alert hooks) could inherit them, whatever environment it is given.

interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, cb: (err?: Error) => void): void;
  on(event: 'error', cb: (err: Error) => void): void;
  close(): void;
}

export interface Notifier {
  /** Sends one state string (e.g. "READY=1\nSTATUS=watching 3 servers"); never throws, never blocks. */
  send(state: string): void;
  /** The watchdog interval systemd expects pings within, when it expects them for this process. */
  readonly watchdogMs: number | undefined;
  close(): void;
}

const DISABLED: Notifier = { send: () => {}, watchdogMs: undefined, close: () => {} };

/** Reads (and removes) NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID; returns a no-op when not under systemd. */
export function notifierFromEnv(env: NodeJS.ProcessEnv, warn: (m: string) => void): Notifier {
  const socketPath = env.NOTIFY_SOCKET;
  const usec = env.WATCHDOG_USEC;
  const pid = env.WATCHDOG_PID;
  for (const name of ['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID']) delete env[name];
  if (!socketPath) return DISABLED;
  if (!socketPath.startsWith('/')) {
    throw new WardenError('NOTIFY_UNSUPPORTED', `NOTIFY_SOCKET=${socketPath} is not a filesystem socket path; this build sends sd_notify messages to path sockets only (what systemd itself sets). Run the unit with Type=exec instead, or unset NOTIFY_SOCKET.`);
  }
  const socket = openDgram();
  let failing = false;
  socket.on('error', () => {});
  const watchdogMs = usec && /^\d+$/.test(usec) && Number(usec) > 0 && (!pid || pid === String(process.pid)) ? Math.floor(Number(usec) / 1000) : undefined;
  return {
    watchdogMs,
    send(state: string): void {
      const buf = Buffer.from(state, 'utf8');
      socket.send(buf, 0, buf.length, socketPath, (err) => {
        // Said once per run of failures, so a systemd that went away does not flood the journal.
        if (err && !failing) warn(`could not notify systemd on ${socketPath}: ${err.message}`);
        failing = Boolean(err);
      });
    },
    close: () => socket.close(),
  };
}

function openDgram(): DgramSocket {
  try {
    const unix = createRequire(import.meta.url)('unix-dgram') as { createSocket(type: 'unix_dgram'): DgramSocket };
    return unix.createSocket('unix_dgram');
  } catch (err) {
    throw new WardenError('NOTIFY_UNAVAILABLE', `NOTIFY_SOCKET is set but the sd_notify transport (the optional native module unix-dgram) did not load: ${(err as Error).message}. Reinstall mcp-warden where a C++ compiler is available (npm ci builds it), or run the unit with Type=exec.`);
  }
}
