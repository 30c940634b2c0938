import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Alerter, SENDS_AT_ONCE, SENDS_WAITING } from '../../src/alert/dispatch.js';
import { tempDir } from '../helpers/warden.js';

// The dispatcher's bound on one sink (issue 26, item 16): a burst of alerts starts at most SENDS_AT_ONCE exec
// hooks at once, holds SENDS_WAITING more, and drops the rest with one counted report, never silently. The hook
// records, as it starts, how many hooks are alive (itself included), and stays alive a moment.

let dir: string;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('alert dispatch', () => {
  it('runs at most the bound of exec hooks at once, holds the next ones, and reports the dropped rest as one count', async () => {
    const alive = path.join(dir, 'alive');
    const runs = path.join(dir, 'runs');
    fs.mkdirSync(alive);
    const failures: string[] = [];
    const hook = `touch ${alive}/$$; ls ${alive} | wc -l >> ${runs}; sleep 0.1; rm ${alive}/$$`;
    const alerter = new Alerter([{ type: 'exec', command: ['/bin/sh', '-c', hook], timeoutMs: 20_000 }], (sink, reason) => failures.push(`${sink}: ${reason}`), () => {});
    const burst = SENDS_AT_ONCE + SENDS_WAITING + 32;
    for (let i = 0; i < burst; i++) alerter.consider({ event: 'surface_inadmissible', server: 's', reason: `page ${i}` });
    await alerter.drain(60_000);
    const started = fs.readFileSync(runs, 'utf8').trim().split('\n').map(Number);
    expect(started).toHaveLength(SENDS_AT_ONCE + SENDS_WAITING);
    expect(Math.max(...started)).toBeLessThanOrEqual(SENDS_AT_ONCE);
    expect(failures).toEqual([`exec /bin/sh: 32 alert(s) dropped: ${SENDS_AT_ONCE} sends were running and ${SENDS_WAITING} alerts waiting`]);
  }, 90_000);

  it('sends nothing for an event that is not an alert', async () => {
    const failures: string[] = [];
    const alerter = new Alerter([{ type: 'exec', command: ['/bin/false'], timeoutMs: 1000 }], (sink, reason) => failures.push(`${sink}: ${reason}`), () => {});
    alerter.consider({ event: 'canary', server: 's', probe: 'p', result: 'pass', failed: [], medianMs: 1, thresholdMs: 2, source: 'check' });
    await alerter.drain(1000);
    expect(failures).toEqual([]);
  });
});
