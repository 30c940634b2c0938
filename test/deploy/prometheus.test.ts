import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WardenMetrics } from '../../src/daemon/metrics.js';
import { ROOT, SERVERS, WARDEN, tempDir } from '../helpers/warden.js';
import { basicHome } from '../helpers/run-template.js';

// deploy/: the Prometheus alerting rules and their unit tests (promtool), the Alertmanager routing example
// (amtool), and the metric names the rules use, which the daemon must serve (a renamed metric fails here).

const PROMETHEUS = path.join(ROOT, 'deploy/prometheus');
const RULES = path.join(PROMETHEUS, 'mcp-warden.rules.yml');
const RULE_TESTS = ['mcp-warden.rules.test.yml', 'mcp-warden.rules.days.test.yml'].map((f) => path.join(PROMETHEUS, f));
const ALERTMANAGER = path.join(ROOT, 'deploy/alertmanager/alertmanager.example.yml');

/** Where `npm test`'s pretest step (scripts/test-tools.mjs) puts the tools it took from Debian packages. */
const FETCHED = path.join(ROOT, 'test/tools/bin');

/** Runs a host tool, from PATH, else as fetched by `npm test`; a missing one fails with what to do instead of skipping. */
function tool(name: string, pkg: string, args: string[]): { code: number | null; out: string } {
  let r = spawnSync(name, args, { encoding: 'utf8', timeout: 60_000 });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') r = spawnSync(path.join(FETCHED, name), args, { encoding: 'utf8', timeout: 60_000 });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error(`${name} is neither on PATH nor in test/tools/bin: run 'npm test' (its pretest step, scripts/test-tools.mjs, takes it from the Debian package ${pkg}), or install it with 'apt-get install ${pkg}'.`);
  }
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}
const promtool = (args: string[]) => tool('promtool', 'prometheus', args);
const amtool = (args: string[]) => tool('amtool', 'prometheus-alertmanager', args);

const rulesText = fs.readFileSync(RULES, 'utf8');
/** The metric names the rules' expressions use (a histogram's series name its family). */
const usedNames = [...new Set(rulesText.match(/\bmcp_warden_[a-z_]+/g) ?? [])].map((n) => n.replace(/_(bucket|sum|count)$/, ''));
/** Each rule's block of text, from its `- alert:` line to the next. */
const ruleBlocks = rulesText.split(/^\s+- alert: /m).slice(1);

describe('the Prometheus alerting rules', () => {
  it('are accepted by promtool check rules', () => {
    const r = promtool(['check', 'rules', RULES]);
    expect(r.out).toContain('SUCCESS');
    expect(r.code, r.out).toBe(0);
  });

  it('pass their promtool unit tests, a firing and a silent case for each rule', () => {
    const r = promtool(['test', 'rules', ...RULE_TESTS]);
    expect(r.code, r.out).toBe(0);
    const tested = new Set(RULE_TESTS.flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/alertname: (\w+)\n\s+exp_alerts:( \[\])?/g)].map((m) => `${m[1]} ${m[2] ? 'silent' : 'firing'}`)));
    for (const block of ruleBlocks) {
      const name = block.split('\n')[0]?.trim();
      expect(tested, `${name} needs a firing and a silent case in deploy/prometheus/*.test.yml`).toContain(`${name} firing`);
      expect(tested, `${name} needs a firing and a silent case in deploy/prometheus/*.test.yml`).toContain(`${name} silent`);
    }
  });

  it('each carry a severity and a category, and say which command to run', () => {
    expect(ruleBlocks.length).toBeGreaterThanOrEqual(15);
    for (const block of ruleBlocks) {
      const name = block.split('\n')[0]?.trim();
      expect(block, name).toMatch(/severity: (page|ticket)/);
      expect(block, name).toMatch(/category: (security|drift|operations)/);
      expect(block, name).toMatch(/summary: /);
      expect(block, `${name}: its description names no command to run`).toMatch(/`(mcp-warden|systemctl|journalctl) [^`]+`|Check the job name/);
    }
  });
});

describe('the Alertmanager routing example', () => {
  it('is accepted by amtool check-config', () => {
    const r = amtool(['check-config', ALERTMANAGER]);
    expect(r.code, r.out).toBe(0);
  });

  it('pages security alerts and sends drift to the ticket queue', () => {
    const route = (labels: string[]): string => amtool(['config', 'routes', 'test', `--config.file=${ALERTMANAGER}`, ...labels]).out.split('\n').filter((l) => l && !l.startsWith('Warning:')).join('');
    expect(route(['alertname=MCPWardenBinaryChanged', 'severity=page', 'category=security'])).toBe('warden-pager');
    expect(route(['alertname=MCPWardenSurfaceDrift', 'severity=ticket', 'category=drift'])).toBe('warden-drift-queue');
    expect(route(['alertname=MCPWardenDaemonDown', 'severity=page', 'category=operations'])).toBe('warden-pager');
    expect(route(['alertname=MCPWardenOrphanSwept', 'severity=ticket', 'category=operations'])).toBe('warden-operators');
  });
});

describe('the metrics the rules use', () => {
  let dir: string;
  let home: string;
  let daemon: ChildProcessWithoutNullStreams;
  let scraped = '';

  beforeAll(async () => {
    dir = tempDir();
    home = path.join(dir, 'home');
    basicHome(home);
    daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + 10_000;
    while (!/watching \d+ directories/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`daemon not ready: ${stderr}`);
      await new Promise((r) => daemon.stderr.once('data', r));
    }
    const base = /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)?.[1] ?? '';
    scraped = await (await fetch(`${base}/metrics`)).text();
  });
  afterAll(async () => {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are served by the daemon, all but the bundle gauges of a fleet source', () => {
    const served = new Set([...scraped.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    const fleetOnly = ['mcp_warden_bundle_serial', 'mcp_warden_bundle_applied_timestamp_seconds'];
    expect(usedNames.length).toBeGreaterThan(10);
    for (const name of usedNames.filter((n) => !fleetOnly.includes(n))) expect(served, `the rules use ${name}, which the daemon does not serve`).toContain(name);
    for (const name of fleetOnly) expect(served).not.toContain(name);
  });

  it('are all registered once a fleet source is configured', async () => {
    const m = new WardenMetrics();
    m.setBundle(null);
    const registered = new Set((await m.registry.getMetricsAsJSON()).map((x) => x.name));
    for (const name of usedNames) expect(registered, `the rules use ${name}, which src/daemon/metrics.ts does not register`).toContain(name);
  });

  it('name the version and each server, and hold no path of the home', () => {
    const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(scraped).toContain(`mcp_warden_build_info{version="${version}"} 1`);
    expect(scraped).toContain('mcp_warden_server_info{server="basic",posture="enforce",pinned="true"} 1');
    expect(scraped).toContain('mcp_warden_verify_interval_seconds{server="basic"} 3600');
    expect(scraped).toMatch(/^mcp_warden_daemon_start_time_seconds \d+/m);
    expect(scraped).toContain('mcp_warden_daemon_stalled_loops 0');
    expect(scraped).not.toContain(dir);
    expect(scraped).not.toContain(SERVERS);
  });
});
