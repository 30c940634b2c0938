import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, connectClient, tempDir } from '../helpers/warden.js';

// Issue 28: a server that exits without its key (as @sentry/mcp-server does without SENTRY_ACCESS_TOKEN). Added
// without it, the user is told why (the server's own words, escaped) and what to pass; with `--env NAME=VALUE`
// it runs, and the key is in servers.json (owner-only), never in tools.lock; as an argument it is refused.

const SERVER = [NODE, path.join(SERVERS, 'i28/needs-key.mjs')];
const TOKEN = 'sk-demo-0123456789abcdef';
let dir: string;
let home: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a server that needs a key', () => {
  it("added without it: not locked, and the server's own reason is shown", () => {
    const r = cli(home, ['add', 'sentry', '--yes', '--', ...SERVER]);
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toContain('DEMO_ACCESS_TOKEN is required');
    expect(r.stdout).toContain('mcp-warden --home');
  });

  it('with --env NAME=VALUE: runs, the key kept in servers.json (0600) and never in tools.lock', async () => {
    const r = cli(home, ['add', 'sentry', '--yes', '--env', `DEMO_ACCESS_TOKEN=${TOKEN}`, '--', ...SERVER]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(fs.statSync(path.join(home, 'servers.json')).mode & 0o077).toBe(0);
    expect(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).not.toContain(TOKEN);
    const { client } = await connectClient(home, 'sentry');
    try {
      expect(await client.callTool({ name: 'whoami', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'token ok' }] });
    } finally {
      await client.close();
    }
  });

  it('as an argument: refused before anything is written, pointing to --env', () => {
    const r = cli(home, ['add', 'sentry', '--yes', '--', ...SERVER, `--access-token=${TOKEN}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SECRET_IN_ARGUMENTS');
    expect(r.stderr).toContain('--env');
    expect(fs.existsSync(path.join(home, 'servers.json'))).toBe(false);
  });
});
