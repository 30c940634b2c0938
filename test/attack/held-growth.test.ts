import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, INITIALIZE, tempDir } from '../helpers/warden.js';

// Attack: while the initialize result is awaited, everything the server writes is held (Session.held). A server
// that never answers initialize and writes 400 MiB meanwhile must meet the bound (MAX_WAITING_BYTES in
// src/proxy/session.ts): the session closes with a message saying so, and the warden's memory stays bounded.

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
  it('closes the session at the bound on held bytes, with the initialize answered by the reason, and stays under 200 MiB', async () => {
    fs.writeFileSync(scenarioFile, JSON.stringify({ floodBeforeInit: 400 }));
    const s = new RawSession(home, 'hx');
    const pid = s.proc.pid as number;
    let peak = 0;
    const sample = (): void => {
      try {
        peak = Math.max(peak, rssMiB(pid));
      } catch {
        /* the process is gone: the samples so far stand */
      }
    };
    sample();
    const sampler = setInterval(sample, 50);
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    clearInterval(sampler);
    const { code } = await s.exited;
    expect(code).toBe(3);
    expect(answer.error).toMatchObject({ data: { cause: 'protocol_error' }, message: expect.stringMatching(/sent more than \d+ bytes that had to wait for the warden's verification/) });
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(200);
  }, 60_000);
});
