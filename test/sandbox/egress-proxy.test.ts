import http from 'node:http';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONNECTION_BURST, CONNECTIONS_PER_SECOND, EgressProxy, MAX_CONNECTIONS, MAX_HEAD, MAX_LOOKUPS, type EgressDenial, type Resolve } from '../../src/sandbox/egress-proxy.js';

// The proxy of a sandbox with network domains (src/sandbox/egress-proxy.ts) on its own, on real sockets of this
// process: what it reads of a request head, its bounds, and the plain absolute-URI form. The whole path (the
// listener in the sandbox's namespace, the events of a session) is test/sandbox/egress.test.ts.

let upstream: http.Server;
let port: number;
let requests: string[];
let listener: net.Server;
let proxyPort: number;
let denied: EgressDenial[];
let proxy: EgressProxy;

/** Resolves granted names the test's way (test "resolves at most MAX_LOOKUPS names at once"): each lookup waits
 *  until the test answers it, with 127.0.0.1 (so it is refused: nothing leaves this host). */
let pendingLookups: (() => void)[];
let lookups: number;
const heldLookup: Resolve = () => {
  lookups++;
  return new Promise((resolve) => pendingLookups.push(() => resolve([{ address: '127.0.0.1' }])));
};

beforeEach(async () => {
  requests = [];
  upstream = http.createServer((req, res) => (requests.push(`${req.method} ${req.url}`), res.end('upstream')));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  port = (upstream.address() as net.AddressInfo).port;
  denied = [];
  pendingLookups = [];
  lookups = 0;
  proxy = new EgressProxy({ grants: [{ host: 'localhost', ports: [port] }, { host: 'held.test', ports: [port] }], denied: (d) => denied.push(d), lookup: heldLookup });
  listener = net.createServer();
  proxy.serve(listener);
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  proxyPort = (listener.address() as net.AddressInfo).port;
});
afterEach(async () => {
  proxy.close();
  await new Promise((r) => listener.close(r));
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

/** Sends `bytes` to the proxy and returns all it answers until it closes. */
function exchange(bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(proxyPort, '127.0.0.1', () => s.write(bytes));
    let text = '';
    s.on('data', (d) => (text += d.toString('latin1')));
    s.once('close', () => resolve(text));
    s.once('error', reject);
  });
}

describe("the sandbox's egress proxy", () => {
  it('forwards a plain request with an absolute http:// URI to a granted host, as sent', async () => {
    const answer = await exchange(`GET http://localhost:${port}/plain?x=1 HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nupstream$/);
    expect(requests).toEqual([`GET http://localhost:${port}/plain?x=1`]);
    expect(denied).toEqual([]);
  });

  it('refuses a request head over 8 KiB (431), a request that is no proxy request (400), and records neither', async () => {
    const big = await exchange(`CONNECT localhost:${port} HTTP/1.1\r\nX: ${'a'.repeat(MAX_HEAD)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    const origin = await exchange(`GET /relative HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`);
    expect(origin).toMatch(/^HTTP\/1\.1 400 /);
    const control = await exchange(`CONNECT local\x1bhost:${port} HTTP/1.1\r\n\r\n`);
    expect(control).toMatch(/^HTTP\/1\.1 400 /);
    expect(requests).toEqual([]);
    expect(denied).toEqual([]);
  });

  it('refuses a granted name on another port, an IP literal of the loopback and an IPv6 literal (403), each recorded with the host asked for', async () => {
    for (const target of [`localhost:${port + 1}`, `127.0.0.1:${port}`, `[::1]:${port}`]) expect(await exchange(`CONNECT ${target} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(denied).toEqual([
      { kind: 'connect', host: 'localhost', port: port + 1, reason: 'not_granted' },
      { kind: 'connect', host: '127.0.0.1', port, reason: 'not_granted' },
      { kind: 'connect', host: '[::1]', port, reason: 'not_granted' },
    ]);
    expect(requests).toEqual([]);
  });

  it(`holds at most ${MAX_CONNECTIONS} connections open at once: the next one is closed unanswered`, async () => {
    const open: net.Socket[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        const s = net.connect(proxyPort, '127.0.0.1');
        await new Promise((r) => s.once('connect', r));
        open.push(s);
      }
      // Each is accepted once the proxy has seen it: one round trip through a tunnel on the last one proves it.
      const last = open[open.length - 1] as net.Socket;
      last.write(`CONNECT localhost:${port} HTTP/1.1\r\n\r\n`);
      await new Promise((r) => last.once('data', r));
      expect(await exchange(`CONNECT localhost:${port} HTTP/1.1\r\n\r\n`)).toBe('');
    } finally {
      for (const s of open) s.destroy();
    }
  });

  it(`paces new connections: ${CONNECTION_BURST} at once, then ${CONNECTIONS_PER_SECOND} a second; one past the pace waits its turn and is served, not refused`, async () => {
    const extra = 20;
    const started = performance.now();
    for (let i = 0; i < CONNECTION_BURST + extra; i++) expect(await exchange(`GET http://localhost:${port}/${i} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // The bucket holds CONNECTION_BURST tokens and gains CONNECTIONS_PER_SECOND a second: serving `extra` more than
    // it holds takes at least extra / rate seconds, however fast or loaded the machine.
    expect(performance.now() - started).toBeGreaterThanOrEqual((extra / CONNECTIONS_PER_SECOND) * 1000 - 5);
    expect(requests).toHaveLength(CONNECTION_BURST + extra);
  });

  it(`resolves at most ${MAX_LOOKUPS} names at once (the rest wait), so a name whose DNS hangs cannot take node's resolver threads from the warden`, async () => {
    const answers = Array.from({ length: 4 }, () => exchange(`CONNECT held.test:${port} HTTP/1.1\r\n\r\n`));
    // A request refused at once, sent after the four: by its answer the proxy has read the four heads.
    expect(await exchange(`CONNECT localhost:${port + 1} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 /);
    expect(lookups).toBe(MAX_LOOKUPS);
    while (lookups < 4 || pendingLookups.length > 0) {
      const next = pendingLookups.shift();
      if (next) next();
      else await new Promise((r) => setImmediate(r));
    }
    for (const a of await Promise.all(answers)) expect(a).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(lookups).toBe(4);
    expect(denied.filter((d) => d.host === 'held.test')).toHaveLength(4);
    expect(requests).toEqual([]);
  });
});
