import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, auditEvents, cli, tempDir } from '../helpers/warden.js';

// `npm start` on the embedded default: the checkout's allowlist.json must match what `npm ci` installed, and
// the machine's node is enrolled as trust-on-first-use, loudly, once.

const home = tempDir();
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function start(): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli/start.js')], { env: { ...process.env, MCP_WARDEN_HOME: home }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm start', () => {
  it('supervises server-everything with no hand edits, enrolling node as trust-on-first-use', () => {
    const r = start();
    expect(r.stderr).not.toMatch(/refused/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('TRUST ON FIRST USE');
    expect(r.stdout).toContain('echo answered: [{"type":"text","text":"Echo: hello through mcp-warden"}]');
    const tofu = auditEvents(home).find((e) => e.event === 'allowlist_changed');
    expect(tofu).toMatchObject({ trustOnFirstUse: true, kind: 'executable' });
    const entries = (JSON.parse(cli(home, ['allowlist', 'list', '--json']).stdout) as { entries: { kind: string; trustOnFirstUse?: boolean }[] }).entries;
    expect(entries.map((e) => [e.kind, e.trustOnFirstUse === true]).sort()).toEqual([['executable', true], ['package', false], ['script', false]]);
  });

  it('does not enroll anything the second time', () => {
    const r = start();
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('TRUST ON FIRST USE');
    expect(auditEvents(home).filter((e) => e.event === 'allowlist_changed')).toHaveLength(1);
    expect(cli(home, ['audit', 'verify']).code).toBe(0);
  });
});
