import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVERS, WARDEN, addServer, cli, tempDir } from '../helpers/warden.js';

// Issue 26 item 12: the daemon's loopback HTTP endpoints answer only a request addressed to the socket they
// listen on (Host: 127.0.0.1:PORT or localhost:PORT, exact) and made by no web page (no Origin, no
// Sec-Fetch-Site of another site). A page that rebinds its own name to 127.0.0.1 sends Host: its-name:PORT, and
// must not read the home path, the user name or the server ids. Requests are written byte for byte on a socket,
// so a forged or doubled Host header is sent as it is.

let dir: string;
let home: string;
let daemon: ChildProcessWithoutNullStreams;
let stderr = '';
let port = 0;

beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'secret-server-id', [process.execPath, path.join(SERVERS, 'basic.mjs')]);
  daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 10_000;
  while (!/watching \d+ directories/.test(stderr)) {
    if (Date.now() > deadline) throw new Error(`daemon not ready: ${stderr}`);
    await new Promise((r) => daemon.stderr.once('data', r));
  }
  port = Number(/metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(stderr)?.[1]);
});
afterAll(async () => {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** Writes `head` (request line and header lines, without the blank line) to the daemon's port and reads the answer
 *  until the daemon closes the connection. */
function raw(head: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', reject);
    sock.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), head: text.slice(0, cut), body: cut < 0 ? '' : text.slice(cut + 4) });
    });
    sock.end([...head, 'Connection: close', '', ''].join('\r\n'));
  });
}

const get = (p: string, headers: string[]): Promise<Answer> => raw([`GET ${p} HTTP/1.1`, ...headers]);

/** A refusal says nothing: no home, no server id, no metric. */
function expectRefusedEmpty(a: Answer, status: number): void {
  expect(a.status).toBe(status);
  expect(a.body).toBe('');
  expect(a.head).not.toContain(home);
  expect(a.head).not.toContain('secret-server-id');
}

describe('the daemon answers only requests addressed to its loopback socket, from no web page', () => {
  it('a scraper addressing 127.0.0.1:PORT or localhost:PORT reads /metrics and /status', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const m = await get('/metrics', [`Host: ${host}`]);
      expect(m.status).toBe(200);
      expect(m.body).toContain('mcp_warden_build_info');
      const s = await get('/status', [`Host: ${host}`, 'Accept: application/json']);
      expect(s.status).toBe(200);
      expect(s.body).toContain(home);
    }
  });

  it('a request whose Host is another name (a rebound page) is refused 421 with an empty body, on every path', async () => {
    for (const p of ['/status', '/metrics', '/', '/nothing']) expectRefusedEmpty(await get(p, [`Host: evil.example:${port}`]), 421);
  });

  it('a Host that is loopback but not exactly this socket is refused: another port, no port, a trailing dot, a suffix, userinfo, ::1 on an IPv4 socket', async () => {
    for (const host of [`127.0.0.1:${port + 1}`, '127.0.0.1', 'localhost', `localhost.:${port}`, `127.0.0.1.evil.example:${port}`, `localhost:${port}.evil.example`, `evil.example@127.0.0.1:${port}`, `[::1]:${port}`, `127.0.0.2:${port}`, `127.0.0.1:0${port}`, ` 127.0.0.1:${port}x`]) {
      expectRefusedEmpty(await get('/status', [`Host: ${host}`]), 421);
    }
  });

  it('a request with no Host (HTTP/1.0) or with two Host headers in either order is refused 421', async () => {
    expectRefusedEmpty(await raw(['GET /status HTTP/1.0']), 421);
    expectRefusedEmpty(await get('/status', [`Host: evil.example:${port}`, `Host: 127.0.0.1:${port}`]), 421);
    expectRefusedEmpty(await get('/status', [`Host: 127.0.0.1:${port}`, `Host: evil.example:${port}`]), 421);
  });

  it('a request a browser sends for a page (any Origin, even its own, or Sec-Fetch-Site of another site) is refused 403 with an empty body', async () => {
    const honest = `Host: 127.0.0.1:${port}`;
    for (const extra of ['Origin: http://evil.example', 'Origin: null', `Origin: http://127.0.0.1:${port}`, 'origin: http://evil.example', 'Sec-Fetch-Site: cross-site', 'Sec-Fetch-Site: same-site']) {
      expectRefusedEmpty(await get('/status', [honest, extra]), 403);
      expectRefusedEmpty(await get('/metrics', [honest, extra]), 403);
    }
  });

  it('a request in absolute form naming another host is refused 421, whatever its Host header says', async () => {
    expectRefusedEmpty(await raw([`GET http://evil.example:${port}/status HTTP/1.1`, `Host: 127.0.0.1:${port}`]), 421);
  });

  it('mcp-warden status still reads the daemon through its owner-only socket', () => {
    const r = cli(home, ['status', '--json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { daemon: { running: boolean; pid: number } }).daemon).toMatchObject({ running: true, pid: daemon.pid });
  });
});
