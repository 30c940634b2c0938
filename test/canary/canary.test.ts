import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { opened, request, toolNames } from '../helpers/surface.js';
import { FILESYSTEM, NODE, RawSession, SERVERS, addServer, auditEvents, cli, tempDir } from '../helpers/warden.js';

// The shim of seed 002: it forwards tools/list verbatim, so every manifest digest matches, and behaves
// differently at call time. Only a canary sees it.

let shared: string;
let template: string;
let files: string;
let dir: string;
let home: string;

// One enrolled home (lock and baselines: three launches of the real server), copied for each test.
beforeAll(() => {
  shared = tempDir();
  template = path.join(shared, 'home');
  files = path.join(shared, 'files');
  fs.mkdirSync(files);
  const missing = path.join(files, 'does-not-exist.txt');
  addServer(template, 'fs', [NODE, FILESYSTEM, files]);
  // A probe of the operator's choosing: a read of a path that does not exist, with the directory normalized.
  const cfg = JSON.parse(fs.readFileSync(path.join(template, 'servers.json'), 'utf8'));
  cfg.servers.fs.canaries = [{ name: 'missing-file', tool: 'read_text_file', arguments: { path: missing }, normalize: [{ pattern: files.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), replace: '<dir>' }] }];
  fs.writeFileSync(path.join(template, 'servers.json'), JSON.stringify(cfg));
  const r = cli(template, ['canary', 'record', 'fs']);
  if (r.code !== 0) throw new Error(r.stderr);
});
afterAll(() => fs.rmSync(shared, { recursive: true, force: true }));

beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  fs.cpSync(template, home, { recursive: true });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Replaces the server with the shim (as an attacker who re-enrolled it would), keeping the lock as it was. */
function swapInShim(mode: 'slow' | 'text'): void {
  const file = path.join(home, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.servers.fs.command = NODE;
  cfg.servers.fs.args = [path.join(SERVERS, 'shim-filesystem.mjs'), FILESYSTEM, files];
  cfg.servers.fs.env = { SHIM_MODE: mode };
  fs.writeFileSync(file, JSON.stringify(cfg));
  for (const p of [path.join(SERVERS, 'shim-filesystem.mjs'), SERVERS]) expect(cli(home, ['allowlist', 'add', p]).code).toBe(0);
}

describe('behavioural canaries', () => {
  it('record pins the shape, the normalized text and a latency envelope for each probe', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8'));
    const canaries = lock.servers.fs.canaries;
    expect(Object.keys(canaries).sort()).toEqual(['missing-file', 'unknown-tool']);
    expect(canaries['missing-file']).toMatchObject({ shape: { kind: 'result', isError: true }, samples: 10 });
    expect(canaries['missing-file'].h_text).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The envelope is an ordered triple of measured times. How small it is on a quiet machine is a benchmark
    // (bench/canary-calibration.mjs), not something a test on a shared machine can promise.
    const { p50_ms: p50, p95_ms: p95, max_ms: max } = canaries['missing-file'] as { p50_ms: number; p95_ms: number; max_ms: number };
    expect([p50, p95, max].every((x) => Number.isFinite(x) && x > 0)).toBe(true);
    expect(p50).toBeLessThanOrEqual(p95);
    expect(p95).toBeLessThanOrEqual(max);
    expect(cli(home, ['canary', 'check', 'fs']).code).toBe(0);
  });

  it('fails a shim that adds 180 ms to tools/call, though every tool digest matches, and refuses the session', async () => {
    swapInShim('slow');
    expect(cli(home, ['verify', 'fs']).code).toBe(0); // the manifest is byte-identical
    const check = cli(home, ['canary', 'check', 'fs', '--json']);
    expect(check.code).toBe(1);
    const result = JSON.parse(check.stdout) as { canaries: { name: string; pass: boolean; failed: string[]; medianMs: number }[] };
    for (const c of result.canaries) {
      expect(c).toMatchObject({ pass: false, failed: ['latency'] });
      expect(c.medianMs).toBeGreaterThan(170);
    }
    const s = new RawSession(home, 'fs');
    const answer = await opened(s);
    expect((answer.error as { message: string }).message).toMatch(/canary "unknown-tool" failed \(latency; median \d+(\.\d+)? ms, limit/);
    expect((await s.exited).code).toBe(3);
    expect(auditEvents(home).filter((e) => e.event === 'canary' && e.source === 'session' && e.result === 'fail').length).toBeGreaterThan(0);
    expect(s.stderr).toMatch(/^mcp-warden ALERT canary server=fs probe=unknown-tool result=fail/m); // the default stderr sink
  });

  it('fails a shim that changes the error text of a missing-file read', () => {
    swapInShim('text');
    const check = cli(home, ['canary', 'check', 'fs', '--json']);
    expect(check.code).toBe(1);
    const result = JSON.parse(check.stdout) as { canaries: { name: string; pass: boolean; failed: string[] }[] };
    expect(result.canaries.find((c) => c.name === 'missing-file')).toMatchObject({ pass: false, failed: ['text'] });
    expect(result.canaries.find((c) => c.name === 'unknown-tool')).toMatchObject({ pass: true });
  });

  it('lets a monitor session through a failed canary, and never shows canary answers to the client', async () => {
    swapInShim('slow');
    const file = path.join(home, 'servers.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.servers.fs.posture = 'monitor';
    fs.writeFileSync(file, JSON.stringify(cfg));
    const s = new RawSession(home, 'fs');
    expect((await opened(s)).result).toBeDefined();
    expect(toolNames(await request(s, 'tools/list'))).toContain('read_text_file');
    s.close();
    await s.exited;
    expect(s.stderr).toContain('failed (latency');
    const drawn = JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8')).servers.fs.canaries['unknown-tool'].tool as string;
    expect(drawn).toMatch(/^[a-z]+_[a-z]+(_[a-z]+)?$/);
    expect(s.stdoutBytes.toString()).not.toContain(drawn);
    expect(s.stdoutBytes.toString()).not.toContain('does-not-exist');
  });

  // "The real server passes with both cores busy" is measured by bench/canary-calibration.mjs (five checks per
  // reference server under two busy loops, false failures counted): busy loops in a test starve the other test
  // worker on a 2-core machine.
});
