import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyTemplateHome, type TemplateSpec } from '../helpers/enrolled-template.js';
import { gatedPackage } from '../helpers/gate.js';
import { pinByHand } from '../helpers/pin-by-hand.js';
import { INITIALIZE, NODE, RawSession, alive, auditEvents, launchCount, sessionLaunch, tempDir } from '../helpers/warden.js';

// `run` spawns a node server behind the module guard's gate as soon as its interpreter is judged, and reads the
// rest (the orphan sweep, the locks, the sandbox's pin) while node starts (src/supervise/run-start.ts; ADR 0056,
// addendum "the spawn before the rest"). A refusal found there, after the spawn, must end the server before a
// byte of its script ran, with the code and exit status it had when it was found before the spawn.

/** A package whose script's first statement writes the file named by WARDEN_TEST_MARKER (when set). */
const MARKING: TemplateSpec = {
  name: 'launch-early-spawn-marking',
  id: 'marking',
  layout: (tree) => gatedPackage(tree, { name: 'marking' }).server,
};

let dir: string;
let home: string;
let marker: string;

beforeEach(() => {
  dir = tempDir('warden-early-spawn-');
  home = path.join(dir, 'home');
  marker = path.join(dir, 'ran');
  copyTemplateHome(MARKING, NODE, home);
  // The marker's name reaches the server through passEnv (the template was enrolled without it).
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, { passEnv: string[] }> };
  (config.servers.marking as { passEnv: string[] }).passEnv = ['WARDEN_TEST_MARKER'];
  fs.writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the early spawn: a refusal found after it leaves no server process and no script byte run', () => {
  it('runs the script once the gate opens (the marker is written by its first statement)', async () => {
    const s = new RawSession(home, 'marking', { ...process.env, WARDEN_TEST_MARKER: marker });
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    await s.exited;
    expect(answer.result).toBeDefined();
    expect(fs.readFileSync(marker, 'utf8')).toBe('server code ran');
  });

  it('refuses an unreadable warden.lock found after the spawn with LOCK_INVALID (exit 4): the spawned server is gone and its script never ran', async () => {
    fs.writeFileSync(path.join(home, 'warden.lock'), 'not a lockfile\n', { mode: 0o600 });
    const s = new RawSession(home, 'marking', { ...process.env, WARDEN_TEST_MARKER: marker });
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    const { code } = await s.exited;

    expect((answer.error as { data: { code: string } }).data.code).toBe('LOCK_INVALID');
    expect(code).toBe(4);
    const refusal = auditEvents(home).filter((e) => e.event === 'launch').at(-1);
    // The refusal names the process that was started behind the gate, and ended there.
    expect(refusal).toMatchObject({ decision: 'refuse', code: 'LOCK_INVALID' });
    expect(refusal?.pid, 'the server had been spawned before the locks were read').toBeTypeOf('number');
    expect(alive(refusal?.pid as number)).toBe(false);
    expect(fs.existsSync(marker), 'no byte of the script ran').toBe(false);
    expect(fs.readdirSync(path.join(home, 'run')).filter((n) => n.endsWith('.json')), 'no run record is left').toEqual([]);
  });

  it('sweeps the session a SIGKILLed warden left recorded, also on a run refused before its spawn (an allowlist.json that is not JSON)', async () => {
    const after = launchCount(home);
    const s = new RawSession(home, 'marking');
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toBeDefined();
    const pid = (await sessionLaunch(home, { after })).pid as number;
    s.proc.kill('SIGKILL');
    await s.exited;
    const record = path.join(home, 'run', `${pid}.json`);
    expect(fs.existsSync(record), 'the killed warden left its session recorded').toBe(true);

    fs.writeFileSync(path.join(home, 'allowlist.json'), 'not json\n', { mode: 0o600 });
    const next = new RawSession(home, 'marking');
    next.send(INITIALIZE + '\n');
    const answer = await next.message(1);
    const { code } = await next.exited;
    expect((answer.error as { data: { code: string } }).data.code).toBe('FILE_NOT_JSON');
    expect(code).toBe(2);
    // The server ends at its stdin's end (the warden's death closed it) or is killed by the sweep; either way the
    // sweep of this refused run settles the record (an orphan_killed event only when it found processes to kill).
    expect(alive(pid)).toBe(false);
    expect(fs.existsSync(record), 'swept by the refused run').toBe(false);
  });

  it('refuses a sandbox pinned in warden.lock but gone from servers.json, found after the spawn, with SANDBOX_NOT_PINNED (exit 3): the server is gone and its script never ran', async () => {
    await pinByHand(home, 'marking', { network: 'none' });
    const file = path.join(home, 'servers.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, { sandbox?: unknown }> };
    delete (config.servers.marking as { sandbox?: unknown }).sandbox;
    fs.writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
    const s = new RawSession(home, 'marking', { ...process.env, WARDEN_TEST_MARKER: marker });
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    const { code } = await s.exited;

    expect((answer.error as { data: { code: string } }).data.code).toBe('SANDBOX_NOT_PINNED');
    expect(code).toBe(3);
    const refusal = auditEvents(home).filter((e) => e.event === 'launch').at(-1);
    expect(refusal).toMatchObject({ decision: 'refuse', code: 'SANDBOX_NOT_PINNED' });
    expect(refusal?.reason).toContain('has no sandbox, but warden.lock pins one');
    expect(refusal?.pid, 'the server had been spawned before its pin was read').toBeTypeOf('number');
    expect(alive(refusal?.pid as number)).toBe(false);
    expect(fs.existsSync(marker), 'no byte of the script ran').toBe(false);
  });
});
