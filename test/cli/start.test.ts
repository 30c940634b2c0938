import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, auditEvents, cli, tempDir } from '../helpers/warden.js';

// `npm start` on the embedded default: the checkout's allowlist.json must match what `npm ci` installed, and
// the machine's node is enrolled as trust-on-first-use, loudly, once.

const home = tempDir();
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

/** Runs `npm start`'s script until its daemon says where metrics are, then stops it with SIGTERM. */
async function start(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli/start.js')], { env: { ...process.env, MCP_WARDEN_HOME: home, MCP_WARDEN_LISTEN: '127.0.0.1:0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, 60_000);
    const look = (d: Buffer): void => {
      stderr += d.toString();
      if (/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/.test(stderr)) {
        clearTimeout(t);
        resolve();
      }
    };
    child.stderr.on('data', look);
    void exited.then(() => (clearTimeout(t), resolve()));
  });
  child.kill('SIGTERM');
  return { code: await exited, stdout, stderr };
}

describe('npm start', () => {
  it('supervises server-everything with no hand edits, enrolling node as trust-on-first-use, then runs the daemon', async () => {
    const r = await start();
    expect(r.stderr).not.toMatch(/refused/);
    expect(r.stderr).toMatch(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics, status at/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('TRUST ON FIRST USE');
    expect(r.stdout).toContain('echo answered: [{"type":"text","text":"Echo: hello through mcp-warden"}]');
    const tofu = auditEvents(home).find((e) => e.event === 'allowlist_changed');
    expect(tofu).toMatchObject({ trustOnFirstUse: true, kind: 'executable' });
    const entries = (JSON.parse(cli(home, ['allowlist', 'list', '--json']).stdout) as { entries: { kind: string; trustOnFirstUse?: boolean }[] }).entries;
    expect(entries.map((e) => [e.kind, e.trustOnFirstUse === true]).sort()).toEqual([['executable', true], ['package', false], ['script', false]]);
  });

  it('does not enroll anything the second time', async () => {
    const r = await start();
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('TRUST ON FIRST USE');
    expect(auditEvents(home).filter((e) => e.event === 'allowlist_changed')).toHaveLength(1);
    expect(cli(home, ['audit', 'verify']).code).toBe(0);
  });
});
