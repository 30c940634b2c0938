import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, cli, tempDir } from '../helpers/warden.js';
import { answerTo, opened, parsed, send } from '../attack6/common.js';
import { writeRules } from '../helpers/rules.js';

// Issue 26, item 8: a canary (at session start, or out of band) never calls a tool the session would refuse to
// the client. The operator's probe calls `wipe`, recorded while it was harmless; then its description drifts to
// "Delete every file under dir". The server counts every call it gets (test/servers/attack22/small-canary-target.mjs).

let shared: string;
let template: string;
let home: string;
let calls: string;
let flag: string;

beforeAll(() => {
  shared = tempDir();
  template = path.join(shared, 'home');
  calls = path.join(shared, 'calls.txt');
  flag = path.join(shared, 'drifted');
  const added = addServer(template, 'ct', [NODE, path.join(SERVERS, 'attack22', 'small-canary-target.mjs')], ['--env', `CALLS_FILE=${calls}`, '--env', `DRIFT_FLAG=${flag}`]);
  if (added.code !== 0) throw new Error(added.stderr);
  const file = path.join(template, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.servers.ct.canaries = [{ name: 'wipe-probe', tool: 'wipe', arguments: { dir: '/nonexistent' }, normalize: [] }];
  fs.writeFileSync(file, JSON.stringify(cfg));
  const r = cli(template, ['canary', 'record', 'ct']);
  if (r.code !== 0) throw new Error(r.stderr);
  fs.writeFileSync(flag, ''); // from now on, wipe has drifted since the lock
  home = path.join(shared, 'run');
});
afterAll(() => fs.rmSync(shared, { recursive: true, force: true }));

beforeEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.cpSync(template, home, { recursive: true });
  fs.writeFileSync(calls, '');
});

const wipeCalls = (): number => fs.readFileSync(calls, 'utf8').split('\n').filter((l) => l === 'wipe').length;
const setPosture = (posture: string): void => {
  const file = path.join(home, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.servers.ct.posture = posture;
  fs.writeFileSync(file, JSON.stringify(cfg));
};

describe('a canary probe of a tool the session does not approve', () => {
  it('a session-start probe of a tool that drifted since the lock is not called, and enforce refuses the session', async () => {
    const session = new RawSession(home, 'ct');
    session.send(INITIALIZE + '\n');
    const answer = await session.message(1);
    session.close(); // a session wrongly released would otherwise wait for the client
    const { code } = await session.exited;
    expect(answer).toMatchObject({ error: { data: { cause: 'surface_refused' } } });
    const error = answer.error as { message: string };
    expect(error.message).toMatch(/canary "wipe-probe" was not run: its tool "wipe" is not proven equal to the lock/);
    expect(code).toBe(3);
    expect(session.stderr).toMatch(/tool "wipe" changed/);
    expect(wipeCalls()).toBe(0);
    const canary = auditEvents(home).filter((e) => e.event === 'canary' && e.probe === 'wipe-probe').pop();
    expect(canary).toMatchObject({ result: 'fail', failed: ['not_run'], notRun: 'tool_not_approved', source: 'session' });
  });

  it("a session-start probe of a tool the operator's rules withhold is not called, in monitor too, while the session refuses the client's call of it", async () => {
    setPosture('monitor');
    writeRules(home, 'ct', { mode: 'strict', tools: { lookup: { kind: 'read' } } });
    fs.rmSync(flag); // wipe as locked: only the rules stand in the way
    const s = new RawSession(home, 'ct');
    try {
      const names = await opened(s);
      expect(names).toEqual(['lookup']);
      send(s, { id: 7, method: 'tools/call', params: { name: 'wipe', arguments: { dir: '/' } } });
      const answer = await answerTo(s, 7, 'the refused call');
      expect((answer.error as { message: string }).message).toMatch(/refused the call to tool "wipe"/);
      s.close();
      await s.exited;
      expect(wipeCalls()).toBe(0);
      expect(s.stderr).toMatch(/canary "wipe-probe" was not run: the operator's rules withhold tool "wipe" \(unclassified\); allowed \(monitor\)/);
      expect(auditEvents(home).filter((e) => e.event === 'canary' && e.probe === 'wipe-probe').pop()).toMatchObject({ result: 'fail', notRun: 'rules_refused' });
      expect(parsed(s).some((m) => m.id === 7 && m.result !== undefined)).toBe(false);
    } finally {
      fs.writeFileSync(flag, '');
    }
  });

  it('in monitor, where the client may still call the drifted tool, the warden does not probe it: not run, reported, the session goes on', async () => {
    setPosture('monitor');
    const s = new RawSession(home, 'ct');
    expect(await opened(s)).toEqual(['lookup', 'wipe']);
    s.close();
    await s.exited;
    expect(wipeCalls()).toBe(0);
    expect(s.stderr).toMatch(/canary "wipe-probe" was not run: its tool "wipe" is not proven equal to the lock[^\n]*; allowed \(monitor\)/);
  });

  it('canary check in monitor does not probe the drifted tool either', () => {
    setPosture('monitor');
    const r = cli(home, ['canary', 'check', 'ct', '--json']);
    expect(r.code).toBe(1);
    expect(wipeCalls()).toBe(0);
  });

  it('canary check (and so the daemon) does not call a probe of a drifted tool and fails it as not run', () => {
    const r = cli(home, ['canary', 'check', 'ct', '--json']);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as { pass: boolean; canaries: { name: string; pass: boolean; failed: string[] }[] };
    expect(result.pass).toBe(false);
    expect(result.canaries.find((c) => c.name === 'wipe-probe')).toMatchObject({ pass: false, failed: ['not_run'] });
    expect(r.stderr).toMatch(/canary "wipe-probe" was not run: its tool "wipe" is not proven equal to the lock/);
    expect(wipeCalls()).toBe(0);
    expect(auditEvents(home).filter((e) => e.event === 'canary' && e.probe === 'wipe-probe').pop()).toMatchObject({ result: 'fail', notRun: 'tool_not_approved', source: 'check' });
  });

  it('canary record does not call a probe of a drifted tool: it refuses, naming the probe and the tool', () => {
    const r = cli(home, ['canary', 'record', 'ct']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/canary "wipe-probe" was not run: its tool "wipe" is not proven equal to the lock/);
    expect(wipeCalls()).toBe(0);
  });

  it('a probe of the approved, unchanged tool is still called (the gate does not stop every canary)', async () => {
    fs.rmSync(flag);
    try {
      const s = new RawSession(home, 'ct');
      await opened(s);
      s.close();
      await s.exited;
      expect(wipeCalls()).toBeGreaterThan(0);
      expect(auditEvents(home).filter((e) => e.event === 'canary' && e.probe === 'wipe-probe').pop()).toMatchObject({ result: 'pass' });
    } finally {
      fs.writeFileSync(flag, '');
    }
  });
});
