import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SERVERS, TRUSTED_PATH, WARDEN, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// A daemon on a temporary home: an allowlisted server file replaced each way a user or an installer replaces
// files must raise a binary_changed alert before anyone launches it.

let shared: string;
let template: string;
let dir: string;
let home: string;
let daemon: ChildProcessWithoutNullStreams | undefined;
let stderr = '';

const rel = {
  script: 'servers/basic.mjs',
  link: 'bin2/mcp-basic',
  early: 'bin1/mcp-basic',
  module: 'servers/lib/rpc.mjs',
  added: 'servers/lib/extra.mjs',
};

beforeAll(() => {
  shared = tempDir();
  template = path.join(shared, 'home');
  fs.cpSync(SERVERS, path.join(shared, 'servers'), { recursive: true });
  const script = path.join(shared, rel.script);
  fs.writeFileSync(script, '#!/usr/bin/env node\n' + fs.readFileSync(script, 'utf8'));
  fs.chmodSync(script, 0o755);
  fs.mkdirSync(path.join(shared, 'bin1'));
  fs.mkdirSync(path.join(shared, 'bin2'));
  fs.symlinkSync('../servers/basic.mjs', path.join(shared, rel.link));
  fs.mkdirSync(template, { mode: 0o700 });
  fs.writeFileSync(path.join(template, 'servers.json'), JSON.stringify({ version: 1, path: `${shared}/bin1:${shared}/bin2:${TRUSTED_PATH}`, servers: {} }), { mode: 0o600 });
  addServer(template, 'basic', ['mcp-basic']);
});
afterAll(() => fs.rmSync(shared, { recursive: true, force: true }));

beforeEach(async () => {
  // Each test gets its own copy of the files the server runs, at the same paths: the template's are moved
  // aside and restored after, so the lock and allowlist stay valid.
  dir = tempDir();
  home = path.join(dir, 'home');
  fs.cpSync(template, home, { recursive: true });
  stderr = '';
  daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(() => /watching \d+ directories/.test(stderr), 'the daemon to be ready');
});
afterEach(async () => {
  daemon?.kill('SIGTERM');
  await new Promise((r) => daemon?.once('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
  restore();
});

const originals = new Map<string, Buffer>();
function mutate(relPath: string, fn: (abs: string) => void): void {
  const abs = path.join(shared, relPath);
  if (!originals.has(abs) && fs.existsSync(abs) && !fs.lstatSync(abs).isSymbolicLink()) originals.set(abs, fs.readFileSync(abs));
  fn(abs);
}
function restore(): void {
  for (const [abs, bytes] of originals) {
    fs.rmSync(abs, { force: true });
    fs.writeFileSync(abs, bytes, { mode: 0o755 });
    fs.chmodSync(abs, 0o755);
  }
  originals.clear();
  fs.rmSync(path.join(shared, rel.early), { force: true });
  fs.rmSync(path.join(shared, rel.added), { force: true });
  fs.rmSync(path.join(shared, rel.link), { force: true });
  fs.symlinkSync('../servers/basic.mjs', path.join(shared, rel.link));
}

async function waitFor(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstderr: ${stderr}`);
    await new Promise<void>((r) => {
      const t = setTimeout(r, Math.max(0, deadline - Date.now()));
      daemon?.stderr.once('data', () => (clearTimeout(t), r()));
    });
  }
}

/** The value of an unlabelled metric on the daemon's /metrics. */
async function metric(name: string): Promise<number> {
  const url = /metrics at (http:\/\/\S+\/metrics)/.exec(stderr)?.[1];
  if (!url) throw new Error(`the daemon did not say where its metrics are\nstderr: ${stderr}`);
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no metric ${name} in:\n${text}`);
  return Number(line.slice(name.length + 1));
}

/** Polls /metrics (bounded) until `pred` holds for the metric. */
async function waitForMetric(name: string, pred: (v: number) => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await metric(name);
    if (pred(v)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${name} is ${v})\nstderr: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits (bounded) until the audit log holds an event of that name. */
async function auditEvent(name: string): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const e = auditEvents(home).find((x) => x.event === name);
    if (e || Date.now() > deadline) return e;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function expectAlert(code: RegExp): Promise<void> {
  await waitFor(() => /server 'basic' would now be refused/.test(stderr), 'a binary_changed alert', 5_000);
  const e = await auditEvent('binary_changed');
  expect(e).toMatchObject({ server: 'basic' });
  expect(String(e?.code)).toMatch(code);
  expect(stderr).toMatch(/mcp-warden ALERT binary_changed server=basic/);
}

const evil = '#!/usr/bin/env node\nconsole.log("evil");\n';

describe('the daemon watching allowlisted files', () => {
  it('is quiet while nothing changes, even when a watched file is rewritten with the same bytes', async () => {
    // The log exists (the template's 'add' wrote it), so an empty answer cannot mean "no log".
    expect(fs.existsSync(path.join(home, 'audit.log'))).toBe(true);
    expect(auditEvents(home).length).toBeGreaterThan(0);
    // Same bytes, new mtime: the daemon must look again (a digest-cache miss shows it did) and find nothing.
    const misses = await metric('mcp_warden_digest_cache_misses');
    mutate(rel.script, (p) => fs.writeFileSync(p, fs.readFileSync(p)));
    await waitForMetric('mcp_warden_digest_cache_misses', (v) => v > misses, 'the daemon to re-check the rewritten file');
    // The window closes on a known event: a real change. Writes to the log are in order, so anything said
    // about the unchanged file since the daemon started is in the log before this alert.
    mutate(rel.script, (p) => fs.appendFileSync(p, '// appended\n'));
    await expectAlert(/DIGEST_MISMATCH/);
    const alerts = auditEvents(home).filter((e) => e.event === 'binary_changed');
    expect(alerts).toHaveLength(1);
    expect(stderr.match(/would now be refused/g)).toHaveLength(1);
  });

  it('alerts on a write in place', async () => {
    mutate(rel.script, (p) => fs.appendFileSync(p, '// appended\n'));
    await expectAlert(/DIGEST_MISMATCH/);
  });

  it('alerts on a rename over the file', async () => {
    mutate(rel.script, (p) => {
      fs.writeFileSync(`${p}.new`, evil, { mode: 0o755 });
      fs.renameSync(`${p}.new`, p);
    });
    await expectAlert(/DIGEST_MISMATCH/);
  });

  it('alerts on unlink and recreate, as install(1) does', async () => {
    const src = path.join(dir, 'evil.mjs');
    fs.writeFileSync(src, evil);
    mutate(rel.script, (p) => execFileSync('install', ['-m', '755', src, p]));
    await expectAlert(/DIGEST_MISMATCH/);
  });

  it('alerts on a cp over the file', async () => {
    const src = path.join(dir, 'evil.mjs');
    fs.writeFileSync(src, evil);
    mutate(rel.script, (p) => execFileSync('cp', [src, p])); // cp(1) keeps the mode of the file it overwrites
    await expectAlert(/DIGEST_MISMATCH/);
  });

  it('alerts when a symlink hop is re-pointed with ln -sfn', async () => {
    const other = path.join(dir, 'other.mjs');
    fs.writeFileSync(other, evil, { mode: 0o755 });
    execFileSync('ln', ['-sfn', other, path.join(shared, rel.link)]);
    await expectAlert(/NOT_ALLOWLISTED/);
  });

  it('alerts when a new file earlier in the trusted PATH would shadow the command', async () => {
    fs.writeFileSync(path.join(shared, rel.early), evil, { mode: 0o755 });
    await expectAlert(/NOT_ALLOWLISTED/);
  });

  it('alerts when a module deep in the package tree is edited', async () => {
    mutate(rel.module, (p) => fs.appendFileSync(p, '// appended\n'));
    await expectAlert(/DIGEST_MISMATCH/);
  });

  it('alerts when a file is added to a directory of the package tree', async () => {
    fs.writeFileSync(path.join(shared, rel.added), evil);
    await expectAlert(/DIGEST_MISMATCH/);
  });

  it('alerts when the whole package directory is swapped for an edited copy', async () => {
    const root = path.join(shared, 'servers');
    const copy = path.join(shared, 'servers.new');
    const old = path.join(shared, 'servers.old');
    fs.cpSync(root, copy, { recursive: true });
    fs.appendFileSync(path.join(copy, 'lib/rpc.mjs'), '// appended\n');
    try {
      fs.renameSync(root, old);
      fs.renameSync(copy, root);
      await expectAlert(/DIGEST_MISMATCH/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
      fs.renameSync(old, root);
    }
  });

  it('refuses an invalid allowlist edit with an alert and keeps the last good one', async () => {
    fs.writeFileSync(path.join(home, 'allowlist.json'), '{"version":1,"entries":[');
    await waitFor(() => /refused the new configuration/.test(stderr), 'the refusal');
    expect(await auditEvent('config_invalid')).toMatchObject({ code: 'FILE_NOT_JSON' });
    mutate(rel.script, (p) => fs.appendFileSync(p, '// appended\n'));
    await expectAlert(/DIGEST_MISMATCH/);
  });
});
