import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, INITIALIZE, tempDir } from '../helpers/warden.js';

// ATTACK: while the initialize result is awaited, everything the server writes is held in memory (Session.held)
// with no cap and no backpressure (the server's stdout is paused only when the client's stdout is full, and
// nothing is written to the client before release). A server that never answers initialize grows the warden
// without bound. Asserts the secure behaviour (a bound); FAILS on the build it was written against.

let dir: string;
let home: string;
let scenarioFile: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenarioFile, '{}');
  addServer(home, 'hx', [NODE, path.join(SERVERS, 'attack-hostile.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`]);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

describe('attack: memory held before the initialize result', () => {
  it('does not hold an unbounded amount of server output while the initialize result is awaited', async () => {
    fs.writeFileSync(scenarioFile, JSON.stringify({ floodBeforeInit: 400 }));
    const s = new RawSession(home, 'hx');
    const before = rssMiB(s.proc.pid as number);
    s.send(INITIALIZE + '\n');
    let peak = 0;
    for (let i = 0; i < 60; i++) {
      await new Promise((r) => setTimeout(r, 250));
      if (s.proc.exitCode !== null) break;
      peak = Math.max(peak, rssMiB(s.proc.pid as number));
    }
    s.proc.kill('SIGTERM');
    await s.exited;
    console.log(`warden RSS: ${before.toFixed(0)} MiB at start, peak ${peak.toFixed(0)} MiB while the server wrote 400 MiB before answering initialize`);
    expect(peak).toBeLessThan(200); // FAILS: the held queue grows with what the server writes
  }, 60_000);
});
