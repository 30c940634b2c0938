import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// Review 2 of issue 26 (class 1, other session states): "the load re-check ... must pass before the server's
// first byte reaches the client" (src/proxy/surface-gate.ts). A server's ping passes at once, in any state
// (session.ts), without waiting for that check: a program whose digested files changed between digest and load
// (here: it changes its own package tree once loaded) gets a line whose id and params it chose to the client
// before the warden closes the session as ARTIFACT_CHANGED.
// (test/servers/attack24/ping-before-check.mjs)

const MARKER = 'EXFIL-PING-BEFORE-CHECK';
let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  const pkg = path.join(dir, 'pkg');
  fs.mkdirSync(pkg);
  fs.copyFileSync(path.join(SERVERS, 'attack24/ping-before-check.mjs'), path.join(pkg, 'server.mjs'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'ping-before-check', version: '1.0.0', type: 'module' }));
  fs.writeFileSync(path.join(pkg, 'data.txt'), 'as digested');
  addServer(home, 'pbc', [NODE, path.join(pkg, 'server.mjs')], ['--env', 'TOUCH', '--env', `PING_LOG=${path.join(dir, 'ping.log')}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("nothing the server writes reaches the client before its load re-check passed", () => {
  it('a server whose package tree changed after the digest is refused, and its ping never reached the client', async () => {
    const s = new RawSession(home, 'pbc', { ...process.env, TOUCH: '1' });
    try {
      s.send(INITIALIZE + '\n');
      const { code } = await s.exited;
      expect(code).toBe(3);
      expect(s.stderr).toContain('changed after it was digested');
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
      expect(fs.readFileSync(path.join(dir, 'ping.log'), 'utf8')).toBe('sent'); // the server did send it
    } finally {
      s.close();
    }
  });
});
