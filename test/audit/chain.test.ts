import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, cli, launchCount, sessionLaunch, tempDir } from '../helpers/warden.js';

let home: string;
let launchesBefore = 0; // the launches of the home before the twenty sessions (the second test reads the first of theirs)
const lineHash = (line: string): string => createHash('sha256').update(line).digest('hex');

beforeAll(() => {
  home = tempDir();
  // monitor: twenty sessions starting at once on two cores are about the audit chain, not canary latency.
  addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')], ['--posture', 'monitor']);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('the hash-chained audit log', () => {
  it('stays a verifiable chain with twenty runs writing at once', async () => {
    const before = auditEvents(home).length;
    launchesBefore = launchCount(home);
    const sessions = Array.from({ length: 20 }, () => new RawSession(home, 'basic'));
    for (const s of sessions) s.send(INITIALIZE + '\n');
    await Promise.all(sessions.map((s) => s.message(1)));
    for (const s of sessions) s.close();
    const exits = await Promise.all(sessions.map((s) => s.exited));
    expect(exits.map((e, i) => (e.code === 0 ? 0 : `${e.code}: ${sessions[i]?.stderr}`))).toEqual(exits.map(() => 0));
    const events = auditEvents(home).slice(before);
    expect(events.filter((e) => e.event === 'launch' && e.decision === 'allow')).toHaveLength(20);
    expect(events.filter((e) => e.event === 'exit')).toHaveLength(20);
    const r = cli(home, ['audit', 'verify']);
    expect(r.stdout).toMatch(/chain intact/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('records the launch with its path, symlink chain, digests, argv and pid', async () => {
    const launch = await sessionLaunch(home, { after: launchesBefore });
    expect(launch).toMatchObject({ server: 'basic', decision: 'allow', resolvedPath: NODE, chain: [NODE] });
    // The module guard runs before the script (ADR 0014); node 20 starts with require(esm) off (ADR 0049).
    const requireEsmOff = process.versions.node.startsWith('20.') ? ['--no-experimental-require-module'] : [];
    expect(launch?.argv).toEqual([NODE, ...requireEsmOff, '--import', expect.stringMatching(/^file:\/\/.*\/dist\/launch\/preload\/preload\.js$/), path.join(SERVERS, 'basic.mjs')]);
    expect(launch?.pgid).toBe(launch?.pid);
    const artifacts = launch?.artifacts as { kind: string; sha256: string }[];
    expect(artifacts.map((a) => a.kind)).toEqual(['executable', 'script', 'package']);
    for (const a of artifacts) expect(a.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the first line that was altered', () => {
    const file = path.join(home, 'audit.log');
    const copy = path.join(home, 'audit.copy');
    fs.copyFileSync(file, copy);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const k = lines.findIndex((l) => l.includes('"decision":"allow"'));
    lines[k] = (lines[k] as string).replace('"decision":"allow"', '"decision":"refuse"');
    fs.writeFileSync(file, lines.join('\n'));
    const r = cli(home, ['audit', 'verify']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`chain broken at line ${k + 2}: expected prev`);
    expect(r.stdout).toContain(`(sha256 of line ${k + 1})`);
    fs.copyFileSync(copy, file);
  });

  it('names the line after an inserted one, even when the forgery is chained onto the line before it', () => {
    const file = path.join(home, 'audit.log');
    const copy = path.join(home, 'audit.copy');
    fs.copyFileSync(file, copy);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const k = 3; // the forged line becomes line k + 1, between lines k and k + 1 of the real log
    const forged = JSON.stringify({ ts: new Date().toISOString(), prev: lineHash(lines[k - 1] as string), event: 'launch', server: 'basic', decision: 'allow', reason: 'forged' });
    lines.splice(k, 0, forged);
    fs.writeFileSync(file, lines.join('\n'));
    const r = cli(home, ['audit', 'verify', '--json']);
    expect(r.code).toBe(1);
    // The forgery itself carries a correct prev; the real line after it does not name it.
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, badLine: k + 2, reason: `expected prev ${lineHash(forged)} (sha256 of line ${k + 1}), got ${lineHash(lines[k - 1] as string)}` });
    fs.copyFileSync(copy, file);
  });

  it('names an inserted copy of a line at the copy', () => {
    const file = path.join(home, 'audit.log');
    const copy = path.join(home, 'audit.copy');
    fs.copyFileSync(file, copy);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.splice(4, 0, lines[1] as string); // line 2 again, as line 5
    fs.writeFileSync(file, lines.join('\n'));
    const r = cli(home, ['audit', 'verify', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, badLine: 5 });
    fs.copyFileSync(copy, file);
  });

  it('names a deleted line', () => {
    const file = path.join(home, 'audit.log');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.splice(2, 1);
    fs.writeFileSync(file, lines.join('\n'));
    const r = cli(home, ['audit', 'verify', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, badLine: 3 });
  });
});
