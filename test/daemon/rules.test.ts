import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARDEN, auditEvents, cli, tempDir } from '../helpers/warden.js';
import { basicHome } from '../helpers/run-template.js';
import { writeRules } from '../helpers/rules.js';

// The daemon on the operator's rules: a change made through `mcp-warden rules` is pinned with it and is not
// reported; rules changed by hand in servers.json differ from their pin in warden.lock and are an alert
// (`rules_changed`, via `outside_cli`), once per new hash.

let dir: string;
let home: string;
let daemon: ChildProcessWithoutNullStreams;
let stderr = '';

async function waitFor(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstderr: ${stderr}`);
    await new Promise<void>((r) => {
      const done = (): void => {
        clearTimeout(t);
        daemon.stderr.off('data', done);
        r();
      };
      const t = setTimeout(done, Math.min(50, Math.max(0, deadline - Date.now())));
      daemon.stderr.on('data', done);
    });
  }
}

const outside = (): Record<string, unknown>[] => auditEvents(home).filter((e) => e.event === 'rules_changed' && e.via === 'outside_cli');
const pinned = (): string | undefined => JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8')).servers.basic.h_rules;
const hashNow = (): string => JSON.parse(cli(home, ['rules', 'basic', '--json']).stdout).pin.hash;

async function metric(name: string, labels = ''): Promise<number> {
  const url = /metrics at (http:\/\/\S+\/metrics)/.exec(stderr)?.[1] ?? '';
  const line = (await (await fetch(url)).text()).split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return Number(line?.split(' ').pop() ?? 0);
}

/** Waits (bounded) until the daemon has run an attestation round after now: a reload checks the rules first. */
async function reloaded(hitsBefore: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await metric('mcp_warden_digest_cache_hits')) <= hitsBefore) {
    if (Date.now() > deadline) throw new Error(`the daemon did not reload\nstderr: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  basicHome(home);
  const r = cli(home, ['rules', 'basic', '--mode', 'strict', '--kind', 'echo=read']);
  if (r.code !== 0) throw new Error(r.stderr);
  daemon = spawn(process.execPath, [WARDEN, '--home', home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(() => /watching \d+ directories/.test(stderr), 'the daemon to be ready');
});
afterAll(async () => {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the daemon on rules changed outside the CLI', () => {
  it('reports a hand edit once per new hash as an alert, and stays quiet about changes made through rules', async () => {
    // A change through the CLI: the daemon reloads (servers.json and warden.lock changed) and says nothing.
    const hits = await metric('mcp_warden_digest_cache_hits');
    const viaCli = cli(home, ['rules', 'basic', '--kind', 'env=destructive']);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    await reloaded(hits);
    expect(outside()).toEqual([]);
    const was = pinned();

    writeRules(home, 'basic', { mode: 'strict', tools: { echo: { kind: 'read' }, env: { kind: 'read' } } });
    const first = hashNow();
    await waitFor(() => outside().length >= 1 && /ALERT rules_changed/.test(stderr), 'a rules_changed alert for the hand edit');
    expect(outside()[0]).toMatchObject({ server: 'basic', via: 'outside_cli', from: was, to: first });
    expect(stderr).toMatch(/mcp-warden ALERT rules_changed server=basic via=outside_cli from=sha256:\S+ to=sha256:/);
    expect(stderr).toMatch(/server 'basic': its rules in servers\.json were changed outside the CLI \(changed since the last pin\)/);

    // The same rules written again: the same hash, nothing new. A second, different edit closes the window: its
    // alert is recorded after anything the rewrite could have caused.
    writeRules(home, 'basic', { mode: 'strict', tools: { echo: { kind: 'read' }, env: { kind: 'read' } } });
    writeRules(home, 'basic', { mode: 'strict', tools: { echo: { kind: 'read' } } });
    const second = hashNow();
    await waitFor(() => outside().some((e) => e.to === second), 'a rules_changed alert for the second hand edit');
    expect(outside().map((e) => e.to)).toEqual([first, second]);
    expect(await metric('mcp_warden_rules_changed_total', 'server="basic",via="outside_cli"')).toBe(2);

    // None of this was reported for the change made through the CLI.
    expect(outside().some((e) => e.to === was)).toBe(false);
  });
});
