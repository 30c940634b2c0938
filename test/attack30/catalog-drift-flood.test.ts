import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RawSession } from '../helpers/warden.js';
import { scenarioHome } from '../helpers/scenario-home.js';
import { answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, seventh closing review (item 16's class: server-driven reports capped per session). On a 2026-07-28
// connection a prompts list change for a subscription makes the warden list the catalogs again and judge them
// (modern-session.ts relistCatalogs); each judgement of a drifted catalog is audited as `catalog_drift`, an alert,
// with no cap per session, where re-listed tool surfaces stop being recorded past 64 and refused pages past 5.

const FLOOD = 300;
const sc = scenarioHome([{ id: 'flood', server: 'attack30/catalog-flood.mjs' }]);
beforeAll(() => sc.serve({ drift: true, flood: FLOOD }));

const events = (name: string): number =>
  fs
    .readFileSync(path.join(sc.home, 'audit.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"event":"${name}"`)).length;

describe('prompt list changes on a 2026-07-28 subscription, against a drifted catalog', () => {
  it('are recorded as catalog drift a bounded number of times in a session', async () => {
    fs.writeFileSync(sc.scenario, JSON.stringify({ drift: true, flood: FLOOD }));
    const before = events('catalog_drift');
    const s = new RawSession(sc.home, 'flood');
    try {
      s.send(modernLine(1, 'tools/list'));
      await answerTo(s, 1);
      s.send(modernLine('sub', 'subscriptions/listen', { notifications: { promptsListChanged: true } }));
      // Each change reaches the client once the warden has listed and judged the catalogs again.
      await s.until(() => s.stdoutBytes.toString().split('notifications/prompts/list_changed').length - 1 === FLOOD, `${FLOOD} list changes`, 60_000);
    } finally {
      s.close();
      await s.exited;
    }
    expect(events('catalog_drift') - before).toBeGreaterThan(0);
    expect(events('catalog_drift') - before).toBeLessThanOrEqual(64);
  });

  it('are recorded at most 64 times, then once as capped, when each finds another drift', async () => {
    const FLIPS = 150;
    fs.writeFileSync(sc.scenario, JSON.stringify({ flip: FLIPS }));
    const before = events('catalog_drift');
    const cappedBefore = events('reports_capped');
    const s = new RawSession(sc.home, 'flood');
    try {
      s.send(modernLine(1, 'tools/list'));
      await answerTo(s, 1);
      s.send(modernLine('sub', 'subscriptions/listen', { notifications: { promptsListChanged: true } }));
      await s.until(() => s.stdoutBytes.toString().split('notifications/prompts/list_changed').length - 1 === FLIPS, `${FLIPS} list changes`, 120_000);
    } finally {
      s.close();
      await s.exited;
    }
    // 150 judgements after the first: two of every three find a drift other than the last recorded one (100).
    expect(events('catalog_drift') - before).toBe(64);
    const capped = fs.readFileSync(path.join(sc.home, 'audit.log'), 'utf8').split('\n').filter((l) => l.includes('"event":"reports_capped"'));
    expect(capped.length - cappedBefore).toBe(1);
    expect(JSON.parse(capped.at(-1) as string)).toMatchObject({ event: 'reports_capped', server: 'flood', report: 'catalog_drift', cap: 64 });
  });
});
