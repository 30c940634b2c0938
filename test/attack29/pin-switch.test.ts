import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RawSession, cli } from '../helpers/warden.js';
import { scenarioHome } from '../helpers/scenario-home.js';
import { MARKER, answerTo } from '../attack27/helpers.js';

// Issue 26, sixth closing review. "`diff` shows the served value of each changed member (escaped, whole) ... so a
// pin is not taken blind" (threat model). But `pin` launches the server again and locks whatever that launch
// serves, printing only counts and the tools' surface hash (which does not cover the initialize result): a server
// that shows `diff` one value and `pin` another has the second locked, and every session released with it.

const sc = scenarioHome([{ id: 'pinswitch', server: 'attack29/pin-switch.mjs' }]);

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

describe('pin after diff', () => {
  it('locks only an initialize result diff showed', async () => {
    // Count the launches diff makes, then tell the server to switch after as many.
    fs.writeFileSync(sc.scenario, JSON.stringify({ evilAfter: 1_000 }));
    cli(sc.home, ['diff', 'pinswitch']);
    const launches = Number(fs.readFileSync(`${sc.scenario}.count`, 'utf8'));
    fs.rmSync(`${sc.scenario}.count`);
    fs.writeFileSync(sc.scenario, JSON.stringify({ evilAfter: launches }));

    const diff = cli(sc.home, ['diff', 'pinswitch']);
    expect(diff.stdout + diff.stderr).toContain('Echoes text (version 2).');
    expect(diff.stdout + diff.stderr).not.toContain(MARKER);
    // pin launches the server again: what it fetched is not what diff showed, so nothing is pinned (ADR 0054).
    const pin = cli(sc.home, ['pin', 'pinswitch']);
    expect(pin.code, pin.stderr).toBe(3);
    expect(pin.stderr).toContain("SURFACE_NOT_REVIEWED: nothing was pinned for server 'pinswitch': what it serves now differs from what 'mcp-warden diff pinswitch' showed at");
    expect(pin.stderr).toContain('(the initialize result)');

    const s = new RawSession(sc.home, 'pinswitch');
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
