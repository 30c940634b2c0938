import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, auditEvents, INITIALIZE, tempDir } from '../helpers/warden.js';

// ATTACK: every refused server message is one audit line and one alert to every sink, unbounded and
// unthrottled (src/proxy/session.ts onRefusedServerMessage, src/alert/dispatch.ts: no cap on in-flight sends).
// A hostile server that writes answers to ids no request has makes the warden spawn one exec hook per line, all
// at once, and grow the audit log without bound. These tests assert the secure behaviour and FAIL on the build
// they were written against.

let dir: string;
let home: string;
let scenarioFile: string;
const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));

beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  serve({});
  addServer(home, 'hx', [NODE, path.join(SERVERS, 'attack-hostile.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`]);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('attack: refused-message flood', () => {
  it('does not run an unbounded number of exec alert hooks at once for a flood of refused server messages', async () => {
    const marks = path.join(dir, 'marks');
    const file = path.join(home, 'servers.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.alerts = [{ type: 'exec', command: ['/bin/sh', '-c', `echo "s $(date +%s%N)" >> ${marks}; sleep 1; echo "e $(date +%s%N)" >> ${marks}`], timeoutMs: 10_000 }];
    fs.writeFileSync(file, JSON.stringify(cfg));
    serve({ spam: 150 });
    const s = new RawSession(home, 'hx');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    await new Promise((r) => setTimeout(r, 2500));
    s.close();
    await s.exited;
    const events = fs.readFileSync(marks, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')).map(([k, t]) => ({ k, t: BigInt(t as string) })).sort((a, b) => (a.t < b.t ? -1 : 1));
    let live = 0;
    let most = 0;
    for (const e of events) {
      live += e.k === 's' ? 1 : -1;
      most = Math.max(most, live);
    }
    console.log(`exec hooks started: ${events.filter((e) => e.k === 's').length}, most at once: ${most}`);
    expect(most).toBeLessThanOrEqual(10); // FAILS: ~150 hook processes at once
  });

  it('does not write one audit line per refused server message without bound', async () => {
    serve({ spam: 5000 });
    const s = new RawSession(home, 'hx');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send('{"jsonrpc":"2.0","id":2,"method":"ping"}\n'); // answered after the flood: once here, the flood was processed
    await s.until(() => s.lines().some((l) => JSON.parse(l.toString()).id === 2), 'the ping answered', 60_000);
    s.close();
    await s.exited;
    const refused = auditEvents(home).filter((e) => e.event === 'server_message_refused').length;
    const size = fs.statSync(path.join(home, 'audit.log')).size;
    console.log(`server_message_refused audit lines: ${refused}, audit.log ${size} bytes, stderr ${s.stderr.length} bytes`);
    expect(refused).toBeLessThanOrEqual(100); // FAILS: 5000 lines, linear in what the server sends
  }, 90_000);
});
