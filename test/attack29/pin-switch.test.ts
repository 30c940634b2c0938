import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo } from '../attack27/helpers.js';

// Issue 26, sixth closing review. "`diff` shows the served value of each changed member (escaped, whole) ... so a
// pin is not taken blind" (threat model). But `pin` launches the server again and locks whatever that launch
// serves, printing only counts and the tools' surface hash (which does not cover the initialize result): a server
// that shows `diff` one value and `pin` another has the second locked, and every session released with it.

let dir: string;
let home: string;
let scenarioFile: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenarioFile, '{}');
  addServer(home, 'pinswitch', [NODE, path.join(SERVERS, 'attack29/pin-switch.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe('pin after diff', () => {
  it('locks only an initialize result diff showed', async () => {
    // Count the launches diff makes, then tell the server to switch after as many.
    fs.writeFileSync(scenarioFile, JSON.stringify({ evilAfter: 1_000 }));
    cli(home, ['diff', 'pinswitch']);
    const launches = Number(fs.readFileSync(`${scenarioFile}.count`, 'utf8'));
    fs.rmSync(`${scenarioFile}.count`);
    fs.writeFileSync(scenarioFile, JSON.stringify({ evilAfter: launches }));

    const diff = cli(home, ['diff', 'pinswitch']);
    expect(diff.stdout + diff.stderr).toContain('Echoes text (version 2).');
    expect(diff.stdout + diff.stderr).not.toContain(MARKER);
    const pin = cli(home, ['pin', 'pinswitch']);
    expect(pin.code).toBe(0);

    const s = new RawSession(home, 'pinswitch');
    try {
      s.send(initialize);
      const answer = await answerTo(s, 1);
      // Released only on what the operator was shown (or refused): never on text diff did not show.
      expect(answer.result ?? answer.error).toBeDefined();
      expect(JSON.stringify(answer)).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  }, 60_000);
});
