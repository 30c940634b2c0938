import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, WARDEN, cli, perTestDirs } from '../helpers/warden.js';

// Trust files are updated read-modify-write under a lock: concurrent writers never lose each other's update.

const tmp = perTestDirs();

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [WARDEN, '--home', tmp.home, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.once('exit', (code) => resolve({ code, out }));
  });
}

describe('concurrent updates of the trust files', () => {
  it('keeps every server of five adds running at once', async () => {
    // Each server its own script, so each add also adds allowlist entries of its own.
    const ids = ['s1', 's2', 's3', 's4', 's5'];
    for (const id of ids) fs.mkdirSync(path.join(tmp.dir, id));
    for (const id of ids) {
      fs.cpSync(path.join(SERVERS, 'lib'), path.join(tmp.dir, id, 'lib'), { recursive: true });
      fs.writeFileSync(path.join(tmp.dir, id, 'package.json'), '{"type":"module"}');
      fs.copyFileSync(path.join(SERVERS, 'basic.mjs'), path.join(tmp.dir, id, 'server.mjs'));
    }
    cli(tmp.home, ['status']); // creates nothing; the home is created by the adds themselves
    const results = await Promise.all(ids.map((id) => run(['add', id, '--yes', '--', NODE, path.join(tmp.dir, id, 'server.mjs')])));
    for (const r of results) expect(r.code, r.out).toBe(0);
    const servers = JSON.parse(fs.readFileSync(path.join(tmp.home, 'servers.json'), 'utf8')) as { servers: Record<string, unknown> };
    expect(Object.keys(servers.servers).sort()).toEqual(ids);
    const allowlist = JSON.parse(fs.readFileSync(path.join(tmp.home, 'allowlist.json'), 'utf8')) as { entries: { path: string }[] };
    for (const id of ids) expect(allowlist.entries.map((e) => e.path)).toContain(path.join(tmp.dir, id, 'server.mjs'));
    const status = JSON.parse(cli(tmp.home, ['status', '--json']).stdout) as { servers: { id: string; allowed: boolean; lock: { tools: number } | null }[] };
    expect(status.servers.map((s) => [s.id, s.allowed, s.lock?.tools])).toEqual(ids.map((id) => [id, true, 2]));
    expect(cli(tmp.home, ['audit', 'verify']).code).toBe(0);
  });

  it('keeps every entry of six allowlist adds running at once', async () => {
    const files = [1, 2, 3, 4, 5, 6].map((i) => path.join(tmp.dir, `tool${i}`));
    for (const [i, f] of files.entries()) fs.writeFileSync(f, `#!/bin/sh\necho ${i}\n`, { mode: 0o755 });
    fs.mkdirSync(tmp.home, { mode: 0o700 });
    const results = await Promise.all(files.map((f) => run(['allowlist', 'add', f])));
    for (const r of results) expect(r.code, r.out).toBe(0);
    const list = JSON.parse(cli(tmp.home, ['allowlist', 'list', '--json']).stdout) as { entries: { path: string }[] };
    expect(list.entries.map((e) => e.path).sort()).toEqual([...files].sort());
  });
});
