import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, INITIALIZE, tempDir } from '../helpers/warden.js';

// ATTACK: every refused server message is one audit line and one alert to every sink, unbounded and
// unthrottled (src/proxy/session.ts onRefusedServerMessage, src/alert/dispatch.ts: no cap on in-flight sends).
// A hostile server that writes answers to ids no request has makes the warden spawn one exec hook per line, all
// at once, and grow the audit log without bound. These tests assert the secure behaviour; they failed on the
// build they were written against (since, the first five are audited, the rest counted, and the session is
// closed at the hundredth).

let dir: string;
let home: string;
let scenarioFile: string;
const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));

// attack-hostile.mjs added with its scenario in the test's dir, once; each test gets a copy (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  fs.writeFileSync(path.join(d, 'scenario.json'), JSON.stringify({}));
  addServer(h, 'hx', [NODE, path.join(SERVERS, 'attack-hostile.mjs')], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`]);
});

beforeEach(() => {
  dir = tempDir();
  scenarioFile = path.join(dir, 'scenario.json');
  serve({});
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('attack: refused-message flood', () => {
  it('runs no more than a handful of exec alert hooks for a flood of refused server messages', async () => {
    const marks = path.join(dir, 'marks');
    const file = path.join(home, 'servers.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.alerts = [{ type: 'exec', command: ['/bin/sh', '-c', `echo s >> ${marks}`], timeoutMs: 10_000 }];
    fs.writeFileSync(file, JSON.stringify(cfg));
    serve({ spam: 150 });
    const s = new RawSession(home, 'hx');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    expect((await s.exited).code).toBe(3); // closed at the 100th refused message; the alerts are flushed before exit
    const hooks = fs.readFileSync(marks, 'utf8').split('\n').filter(Boolean).length;
    expect(hooks).toBeGreaterThanOrEqual(1);
    expect(hooks).toBeLessThanOrEqual(10);
  });

  it('audits the first refused messages one by one, counts the rest, and closes the session past the bound', async () => {
    serve({ spam: 5000 });
    const s = new RawSession(home, 'hx');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    expect((await s.exited).code).toBe(3);
    const events = auditEvents(home);
    expect(events.filter((e) => e.event === 'server_message_refused').length).toBe(5);
    expect(events.filter((e) => e.event === 'exit').pop()).toMatchObject({ cause: 'protocol_error', refusedServerMessages: 100 });
    expect(s.stderr).toMatch(/sent 100 messages that answer no waiting request/);
    expect(s.stderr.length).toBeLessThan(20_000);
  });
});
