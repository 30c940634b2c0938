import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requireHost } from '../helpers/host.js';
import { BASE_TOOLS, MARKER, opened, request, type Shifter } from '../helpers/surface.js';
import { shapeshifterTemplate } from '../helpers/shifter-template.js';
import { RawSession, auditEvents, tempDir } from '../helpers/warden.js';

let sh: Shifter;
/** shapeshifter({ toolsRaw: BASE_TOOLS }), its server added once for the file (helpers/shifter-template.ts). */
const baseShifter = shapeshifterTemplate({ toolsRaw: BASE_TOOLS });
const servers: http.Server[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  sh?.cleanup();
  for (const c of cleanups.splice(0)) c();
  for (const server of servers.splice(0)) {
    server.closeAllConnections(); // a receiver that never answers holds its connections open
    server.close();
  }
});

/** A shifter whose served description drifted, with the given alert sinks. */
function drifted(alerts: unknown[]): Shifter {
  const s = baseShifter();
  const file = path.join(s.home, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.alerts = alerts;
  fs.writeFileSync(file, JSON.stringify(cfg));
  s.serve({ toolsRaw: BASE_TOOLS.replace('Searches the web.', `Searches. ${MARKER}`) });
  return s;
}

async function sessionWithRefusedCall(s: Shifter, wrap: string[] = []): Promise<{ code: number | null; stderr: string }> {
  const session = new RawSession(s.home, 'shifty', process.env, wrap);
  await opened(session);
  await request(session, 'tools/call', { name: 'search', arguments: {} });
  session.close();
  const { code } = await session.exited;
  return { code, stderr: session.stderr };
}

function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)));
}

/** A unix datagram socket bound by a python process that prints each datagram it receives (and a blank line),
 *  in a directory of its own; removed after the test. */
async function journal(): Promise<{ dir: string; sock: string; text: () => string; printed: (re: RegExp) => Promise<void> }> {
  requireHost('python3', '/usr/bin/logger');
  const dir = tempDir();
  const sock = path.join(dir, 'journal.sock');
  const receiver = spawn('python3', ['-c', `import socket\ns=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.bind(${JSON.stringify(sock)})\nprint('ready', flush=True)\nwhile True:\n  print(s.recv(65536).decode(errors='replace').rstrip('\\n') + '\\n', flush=True)`], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => {
    receiver.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let got = '';
  const waiters: (() => void)[] = [];
  receiver.stdout.on('data', (d: Buffer) => ((got += d.toString()), waiters.splice(0).forEach((w) => w())));
  /** Waits (bounded) for the receiver to print what matches: a datagram sent before the warden exited is
   *  printed by the receiver afterwards, on its own time. */
  const printed = async (re: RegExp, ms = 10_000): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!re.test(got)) {
      if (Date.now() > deadline || receiver.exitCode !== null) throw new Error(`the receiver did not print ${re} (got: ${JSON.stringify(got)})`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(0, deadline - Date.now()));
        waiters.push(() => (clearTimeout(t), r()));
      });
    }
  };
  await printed(/^ready$/m);
  return { dir, sock, text: () => got, printed };
}

/** A command that runs the warden in a mount namespace of its own (as root) with a /run that has no journal and
 *  a /dev that has no log socket, except the ones given: `journal` bound at /run/systemd/journal/socket,
 *  `devLog` at /dev/log. `dir` holds the new /dev until it is moved into place. */
function inNamespace(dir: string, sockets: { journal?: string; devLog?: string }): string[] {
  const dev = path.join(dir, 'dev');
  const script = [
    'set -e',
    'mount -t tmpfs tmpfs /run',
    ...(sockets.journal ? ['mkdir -p /run/systemd/journal', 'touch /run/systemd/journal/socket', `mount --bind '${sockets.journal}' /run/systemd/journal/socket`] : []),
    `mkdir '${dev}'`,
    `mount -t tmpfs tmpfs '${dev}'`,
    `for n in null zero full random urandom tty; do touch '${dev}'/$n; mount --bind /dev/$n '${dev}'/$n; done`,
    `ln -s /proc/self/fd '${dev}/fd'`,
    ...(sockets.devLog ? [`touch '${dev}/log'`, `mount --bind '${sockets.devLog}' '${dev}/log'`] : []),
    `mount --move '${dev}' /dev`,
    'exec "$@"',
  ].join('\n');
  return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'sh'];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** One session on `s`: `n` times a refused call (an alert to every sink) then a relayed call, each pair timed
 *  (ms); `before close` runs while the session is still open. Returns the timings and the exit code. */
async function timedRoundTrips(s: Shifter, n: number, beforeClose: (session: RawSession) => Promise<void> = async () => {}): Promise<{ ms: number[]; code: number | null }> {
  const session = s.session();
  await opened(session);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    // The drifted tool, then tools never listed: each a refusal of its own item, so each is alerted (refusals of
    // one item are alerted 5 times per session, then once as reports_capped: client-refusals.ts).
    const refused = i === 0 ? 'search' : `search-${i}`;
    expect((await request(session, 'tools/call', { name: refused, arguments: {} })).error).toMatchObject({ code: -32001 });
    expect((await request(session, 'tools/call', { name: 'write', arguments: {} })).result).toBeDefined();
    ms.push(performance.now() - t0);
  }
  await beforeClose(session);
  session.close();
  return { ms, code: (await session.exited).code };
}

describe('alert sinks', () => {
  it('posts each alert to a webhook as JSON, with names and digests but never the text', async () => {
    const bodies: string[] = [];
    const url = await listen((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        bodies.push(body);
        res.end('ok');
      });
    });
    sh = drifted([{ type: 'webhook', url }]);
    expect((await sessionWithRefusedCall(sh)).code).toBe(0);
    const events = bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
    expect(events.map((e) => e.event).sort()).toEqual(['call_refused', 'surface']);
    expect(events.find((e) => e.event === 'surface')).toMatchObject({ server: 'shifty', pinState: 'changed', changed: [{ name: 'search', fields: ['description'] }] });
    expect(bodies.join('')).not.toContain(MARKER);
  });

  it('reports a webhook that fails, in the audit log and on stderr, and the session goes on', async () => {
    const url = await listen((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    sh = drifted([{ type: 'webhook', url, retries: 1, timeoutMs: 1000 }]);
    const r = await sessionWithRefusedCall(sh);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/alert sink webhook http:\/\/127\.0\.0\.1:\d+ failed: webhook .* failed after 2 attempt\(s\): HTTP 500/);
    expect(auditEvents(sh.home).find((e) => e.event === 'alert_failed')).toMatchObject({ reason: expect.stringContaining('HTTP 500') });
  });

  it('gives up on a webhook that never answers after its timeoutMs, and reports it', async () => {
    const url = await listen(() => {}); // reads the request, never answers
    sh = drifted([{ type: 'webhook', url, retries: 0, timeoutMs: 300 }]);
    const r = await sessionWithRefusedCall(sh);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/alert sink webhook http:\/\/127\.0\.0\.1:\d+ failed: webhook http:\/\/127\.0\.0\.1:\d+ failed after 1 attempt\(s\): no answer within 300 ms/);
    // Both alerts (the drifted surface, the refused call) were given up on before the session ended.
    expect(auditEvents(sh.home).filter((e) => e.event === 'alert_failed')).toMatchObject([{ reason: expect.stringContaining('no answer within 300 ms') }, { reason: expect.stringContaining('no answer within 300 ms') }]);
  });

  it('never blocks the relay: with a webhook that never answers, round trips stay as fast as with one that answers at once', async () => {
    const N = 10;
    // Calibration: the same session with a receiver that answers each alert at once.
    const quick = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    sh = drifted([{ type: 'webhook', url: quick, retries: 0, timeoutMs: 2000 }]);
    const calibration = await timedRoundTrips(sh, N);
    sh.cleanup();
    // Now a receiver that takes every alert and never answers: each stays in flight for its 2 s (the sink runs
    // SENDS_AT_ONCE of them at a time, the rest wait their turn: the last is taken after two rounds).
    let held = 0;
    const silent = await listen(() => void held++);
    sh = drifted([{ type: 'webhook', url: silent, retries: 0, timeoutMs: 2000 }]);
    // The surface alert and one per refused call were all in flight at the receiver while the calls went on.
    const silently = await timedRoundTrips(sh, N, (session) => session.until(() => held >= 1 + N, 'every alert held by the silent receiver'));
    expect([calibration.code, silently.code]).toEqual([0, 0]);
    // A relay that waited for an alert would take the webhook's 2 s per pair; noise is a few milliseconds.
    const shown = `with the silent receiver ${silently.ms.map(Math.round).join(', ')} ms; calibration ${calibration.ms.map(Math.round).join(', ')} ms`;
    expect(median(silently.ms), shown).toBeLessThan(10 * median(calibration.ms));
  }, 90_000);

  it('runs an exec hook with the event JSON on stdin', async () => {
    sh = baseShifter();
    const out = path.join(sh.dir, 'hook.jsonl');
    const file = path.join(sh.home, 'servers.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.alerts = [{ type: 'exec', command: ['/bin/sh', '-c', `cat >> ${out}`] }];
    fs.writeFileSync(file, JSON.stringify(cfg));
    sh.serve({ toolsRaw: BASE_TOOLS.replace('"readOnlyHint":false', '"readOnlyHint":true') });
    await sessionWithRefusedCall(sh);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((e) => e.event === 'tier_widening_blocked')).toMatchObject({ server: 'shifty', tool: 'search', hints: ['readOnlyHint gained'] });
  });

  it('writes one line a human reads to stderr by default', async () => {
    sh = drifted([{ type: 'stderr' }]);
    const r = await sessionWithRefusedCall(sh);
    expect(r.stderr).toMatch(/^mcp-warden ALERT call_refused server=shifty tool=search reason=/m);
  });

  it('sends syslog datagrams to the socket it is given', async () => {
    const j = await journal();
    sh = drifted([{ type: 'journald', socket: j.sock }]);
    await sessionWithRefusedCall(sh);
    await j.printed(/^<12>1 \S+ \S+ mcp-warden - - .*mcp-warden ALERT surface server=shifty/m);
    await j.printed(/mcp-warden ALERT call_refused server=shifty/);
    expect(j.text()).not.toContain(MARKER);
  });

  it("writes to the journal's native socket when there is one, with the event and the server as fields", async () => {
    const j = await journal();
    sh = drifted([{ type: 'journald' }]);
    // A mount namespace of the warden's own in which /run/systemd/journal/socket is the receiver's socket.
    const r = await sessionWithRefusedCall(sh, inNamespace(j.dir, { journal: j.sock }));
    expect(r.code).toBe(0);
    await j.printed(/^MESSAGE=mcp-warden ALERT call_refused server=shifty tool=search /m);
    const datagrams = j.text().split('\n\n').filter((d) => d.includes('MCP_WARDEN_EVENT=call_refused'));
    expect(datagrams[0]).toMatch(/^SYSLOG_IDENTIFIER=mcp-warden$/m);
    expect(datagrams[0]).toMatch(/^MCP_WARDEN_SERVER=shifty$/m);
    expect(datagrams[0]).toMatch(/^PRIORITY=4$/m);
    await j.printed(/^MCP_WARDEN_EVENT=surface$/m);
    expect(j.text()).not.toContain(MARKER);
  });

  it('falls back to syslog datagrams on /dev/log when there is no journal socket', async () => {
    const j = await journal();
    sh = drifted([{ type: 'journald' }]);
    const r = await sessionWithRefusedCall(sh, inNamespace(j.dir, { devLog: j.sock }));
    expect(r.code).toBe(0);
    await j.printed(/^<12>1 \S+ \S+ mcp-warden - - .*mcp-warden ALERT call_refused server=shifty/m);
    expect(j.text()).not.toMatch(/^MESSAGE=/m);
  });

  it('says on stderr that its alerts go nowhere when there is neither, and the session goes on', async () => {
    const j = await journal();
    sh = drifted([{ type: 'journald' }]);
    const r = await sessionWithRefusedCall(sh, inNamespace(j.dir, {}));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('the journald alert sink found no journal (/run/systemd/journal/socket, /dev/log): its alerts go nowhere');
    expect(auditEvents(sh.home).filter((e) => e.event === 'alert_failed')).toEqual([]);
  });
});
