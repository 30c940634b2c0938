import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, SERVERS, WARDEN, addServer, auditEvents, cli, connectClient, tempDir } from '../helpers/warden.js';

// Issue 10 §3: variables that make an interpreter or the dynamic loader load code nobody digested are refused
// in a server's environment (add --env, servers.json env/passEnv, import), and a warden whose own environment
// (or command line) already preloads code refuses to launch anything: it cannot vouch for itself.

let dir: string;
let home: string;
let evil: string;
let marker: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  marker = path.join(dir, 'preload-ran');
  evil = path.join(dir, 'evil.cjs');
  // A preload that leaves a mark wherever it runs (the warden or the server).
  fs.writeFileSync(evil, `require('node:fs').appendFileSync(${JSON.stringify(marker)}, process.pid + '\\n');\n`);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const BASIC = [NODE, path.join(SERVERS, 'basic.mjs')];
/** The environment of the test process without any loader variable of its own (vitest sets none; be sure). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _o, LD_PRELOAD: _p, LD_AUDIT: _a, ...rest } = process.env;
  return { ...rest, ...extra };
}

describe('loader variables in a server environment', () => {
  it.each([
    ['NODE_OPTIONS=--require=EVIL', 'NODE_OPTIONS'],
    ['LD_PRELOAD=/tmp/x.so', 'LD_PRELOAD'],
    ['NODE_PATH=/tmp', 'NODE_PATH'],
    ['PYTHONPATH=/tmp', 'PYTHONPATH'],
    ['NODE_OPTIONS', 'NODE_OPTIONS'], // passed through from the warden's environment
    ['LD_LIBRARY_PATH', 'LD_LIBRARY_PATH'],
  ])('add --env %s is refused (exit 2, LOADER_VARIABLE), nothing written, nothing run', (spec, name) => {
    const r = cli(home, ['add', 'x', '--yes', '--env', spec.replace('EVIL', evil), '--', ...BASIC], { env: cleanEnv() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`LOADER_VARIABLE: --env ${name}`);
    expect(r.stderr).toMatch(/load code|loads code|changes what code/);
    expect(fs.existsSync(path.join(home, 'servers.json'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'allowlist.json'))).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('add accepts variables that only carry data (NODE_EXTRA_CA_CERTS, PYTHONUNBUFFERED), and lower-case look-alikes', () => {
    addServer(home, 'x', BASIC, ['--env', 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt', '--env', 'PYTHONUNBUFFERED=1', '--env', 'node_options=--require=/nonexistent']);
    const env = (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: { x: { env: Record<string, string> } } }).servers.x.env;
    expect(Object.keys(env).sort()).toEqual(['NODE_EXTRA_CA_CERTS', 'PYTHONUNBUFFERED', 'node_options']);
  });

  it('a hand-edited servers.json that sets or passes one is refused when loaded, with the file, the pointer and what to do', () => {
    addServer(home, 'fx', BASIC);
    const file = path.join(home, 'servers.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: { fx: Record<string, unknown> } };
    config.servers.fx.env = { NODE_OPTIONS: `--require=${evil}` };
    fs.writeFileSync(file, JSON.stringify(config));
    for (const args of [['status'], ['run', 'fx'], ['verify', 'fx']]) {
      const r = cli(home, args, { input: `${INITIALIZE}\n`, env: cleanEnv() });
      const out = r.stderr + r.stdout; // verify reports per server on stdout
      expect(r.code, `${args.join(' ')}: ${out}`).toBe(2);
      expect(out).toContain('FILE_INVALID');
      expect(out).toContain('bad key "NODE_OPTIONS" in servers.json at /servers/fx/env: NODE_OPTIONS is a loader variable');
      expect(out).toContain(file);
      expect(out).toMatch(/Remove it/);
    }
    config.servers.fx.env = {};
    config.servers.fx.passEnv = ['HOME', 'LD_PRELOAD'];
    fs.writeFileSync(file, JSON.stringify(config));
    const r = cli(home, ['run', 'fx'], { input: `${INITIALIZE}\n`, env: cleanEnv({ LD_PRELOAD: '' }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad value "LD_PRELOAD" in servers.json at /servers/fx/passEnv/1');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('import refuses an entry whose env sets one, says why, and launches nothing of it', () => {
    const client = path.join(dir, 'claude_desktop_config.json');
    fs.writeFileSync(
      client,
      JSON.stringify({
        mcpServers: {
          preloaded: { command: NODE, args: [path.join(SERVERS, 'basic.mjs')], env: { NODE_OPTIONS: `--require=${evil}` } },
          audited: { command: NODE, args: [path.join(SERVERS, 'noisy.mjs')], env: { LD_AUDIT: '/tmp/audit.so' } },
          plain: { command: NODE, args: [path.join(SERVERS, 'basic.mjs')], env: { GREETING: 'hi' } },
        },
      }),
    );
    const r = cli(home, ['import', client, '--yes', '--json'], { env: cleanEnv() });
    expect(r.code, r.stderr).toBe(3);
    const report = JSON.parse(r.stdout) as { entries: { name: string; result: string; detail?: string }[] };
    const byName = Object.fromEntries(report.entries.map((e) => [e.name, e]));
    expect(byName.preloaded).toMatchObject({ result: 'refused', detail: expect.stringContaining('"env" sets NODE_OPTIONS') });
    expect(byName.audited).toMatchObject({ result: 'refused', detail: expect.stringContaining('"env" sets LD_AUDIT') });
    expect(byName.plain?.result).toBe('imported');
    expect(Object.keys((JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: object }).servers)).toEqual(['plain']);
    expect(fs.existsSync(marker)).toBe(false);
    expect(JSON.parse(fs.readFileSync(client, 'utf8')).mcpServers.preloaded.env.NODE_OPTIONS).toBe(`--require=${evil}`); // left as it was
  });
});

describe("the warden's own environment", () => {
  // One home with basic.mjs added (it names nothing inside itself), copied for each test and never changed.
  let template: string;
  beforeAll(() => {
    template = path.join(tempDir(), 'home');
    addServer(template, 'b', BASIC);
  });
  afterAll(() => fs.rmSync(path.dirname(template), { recursive: true, force: true }));
  beforeEach(() => {
    fs.cpSync(template, home, { recursive: true });
  });

  const launches = (): number => auditEvents(home).filter((e) => e.event === 'launch' && e.decision === 'allow').length;

  it.each([
    ['NODE_OPTIONS=--require=EVIL', { NODE_OPTIONS: '--require=EVIL' }],
    ['NODE_OPTIONS=-r EVIL', { NODE_OPTIONS: '-r EVIL' }],
    ['NODE_OPTIONS=--import=EVIL', { NODE_OPTIONS: '--max-old-space-size=512 --import=EVIL' }],
    ['NODE_OPTIONS=--experimental-loader EVIL', { NODE_OPTIONS: '--experimental-loader EVIL' }],
    ['LD_PRELOAD', { LD_PRELOAD: '/nonexistent/preload.so' }],
    ['LD_AUDIT', { LD_AUDIT: '/nonexistent/audit.so' }],
  ])('with %s: run refuses (exit 3, WARDEN_PRELOADED), answers the client, launches nothing', (_label, vars) => {
    const before = launches();
    const env = cleanEnv(Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, v.replace('EVIL', evil)])));
    const r = cli(home, ['run', 'b'], { input: `${INITIALIZE}\n`, env });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('WARDEN_PRELOADED');
    expect(r.stderr).toMatch(/cannot vouch/);
    const answer = JSON.parse(r.stdout.trim()) as { error: { data: { code: string } } };
    expect(answer.error.data.code).toBe('WARDEN_PRELOADED');
    expect(launches()).toBe(before);
  });

  it('a preload on the command line that starts the warden is refused the same way', () => {
    const r = spawnSync(NODE, ['--require', evil, WARDEN, '--home', home, 'run', 'b'], { input: `${INITIALIZE}\n`, encoding: 'utf8', env: cleanEnv() });
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toContain('WARDEN_PRELOADED');
    expect(r.stderr).toContain('--require');
  });

  it.each([
    ['add', () => ['add', 'c', '--yes', '--', NODE, path.join(SERVERS, 'noisy.mjs')]],
    ['lock', () => ['lock', 'c']],
    ['verify', () => ['verify', 'b']],
    ['pin', () => ['pin', 'b']],
    ['canary check', () => ['canary', 'check', 'b']],
    ['canary record', () => ['canary', 'record', 'b']],
    ['import', () => {
      const f = path.join(dir, 'client.json');
      fs.writeFileSync(f, JSON.stringify({ mcpServers: { n: { command: NODE, args: [path.join(SERVERS, 'noisy.mjs')] } } }));
      return ['import', f, '--yes'];
    }],
    ['daemon', () => ['daemon', '--listen', '127.0.0.1:0']],
  ])('%s refuses too, exit 3, before writing anything', (_verb, args) => {
    if (_verb === 'lock') {
      const file = path.join(home, 'servers.json');
      const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, unknown> };
      config.servers.c = { command: NODE, args: [path.join(SERVERS, 'noisy.mjs')] };
      fs.writeFileSync(file, JSON.stringify(config));
    }
    const snapshot = (): string[] => ['servers.json', 'allowlist.json', 'tools.lock', 'warden.lock'].map((f) => fs.readFileSync(path.join(home, f), 'utf8'));
    const before = snapshot();
    const launched = launches();
    const r = cli(home, args(), { env: cleanEnv({ NODE_OPTIONS: `--require=${evil}` }) });
    expect(r.code, r.stderr + r.stdout).toBe(3);
    expect(r.stderr + r.stdout).toContain('WARDEN_PRELOADED');
    expect(snapshot()).toEqual(before);
    expect(launches()).toBe(launched);
  });

  it('NODE_OPTIONS without a preload (a heap limit) is no reason to refuse', async () => {
    const { client } = await connectClient(home, 'b', { NODE_OPTIONS: '--max-old-space-size=256' });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'env']);
    } finally {
      await client.close();
    }
  });
});
