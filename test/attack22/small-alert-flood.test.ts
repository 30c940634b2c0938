import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// Issue 26, item 16: a server that makes every page of the client's tools/list inadmissible and notifies list
// changes so that the client lists again (test/servers/attack22/small-relist-flood.mjs). Each refused page was
// audited and alerted, and the exec sink started a process per alert. The exec hook here records, as it starts,
// how many hooks are alive (itself included) and stays alive a moment, so that overlapping runs are seen.

const LISTINGS = 30;
/** The per-session cap of refused client pages recorded one by one (src/proxy/judge.ts). */
const PAGES_RECORDED = 5;
/** At most this many sends of one sink at once (src/alert/dispatch.ts). */
const SENDS_AT_ONCE = 4;

let dir: string;
let home: string;
let runs: string;
let stderr = '';

beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  runs = path.join(dir, 'runs');
  const alive = path.join(dir, 'alive');
  fs.mkdirSync(alive);
  const added = addServer(home, 'flood', [NODE, path.join(SERVERS, 'attack22', 'small-relist-flood.mjs')]);
  if (added.code !== 0) throw new Error(added.stderr);
  const file = path.join(home, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  const hook = `touch ${alive}/$$; ls ${alive} | wc -l >> ${runs}; sleep 0.3; rm ${alive}/$$`;
  cfg.alerts = [{ type: 'exec', command: ['/bin/sh', '-c', hook], timeoutMs: 10_000 }];
  fs.writeFileSync(file, JSON.stringify(cfg));

  const s = new RawSession(home, 'flood');
  const parsed = (): Record<string, unknown>[] => s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>);
  s.send(INITIALIZE + '\n');
  await s.until(() => parsed().some((m) => m.id === 1), 'initialize result');
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  for (let i = 0; i < LISTINGS; i++) {
    s.send(`{"jsonrpc":"2.0","id":${100 + i},"method":"tools/list"}\n`);
    await s.until(() => parsed().filter((m) => m.method === 'notifications/tools/list_changed').length > i, `list_changed ${i + 1}`);
  }
  s.close();
  await s.exited;
  stderr = s.stderr;
  // Each refused page was answered to the client with the refusal.
  const refused = parsed().filter((m) => typeof m.id === 'number' && m.id >= 100 && m.error !== undefined);
  expect(refused).toHaveLength(LISTINGS);
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('reports and alerts a server drives with inadmissible listings', () => {
  it('records at most the cap of refused client pages one by one, then one event that says further ones are counted', () => {
    const events = auditEvents(home);
    expect(events.filter((e) => e.event === 'surface_inadmissible')).toHaveLength(PAGES_RECORDED);
    const capped = events.filter((e) => e.event === 'reports_capped');
    expect(capped).toHaveLength(1);
    expect(capped[0]).toMatchObject({ server: 'flood', report: 'surface_inadmissible', cap: PAGES_RECORDED });
    expect(stderr.match(/refused a tools\/list page of server 'flood'/g)).toHaveLength(PAGES_RECORDED);
    expect(stderr).toMatch(/server 'flood' keeps serving listing pages that cannot be admitted/);
    const exit = events.filter((e) => e.event === 'exit').pop();
    expect(exit).toMatchObject({ refusedPages: LISTINGS });
  });

  it('starts one exec hook per recorded alert, never more than the bound alive at once', () => {
    const started = fs.readFileSync(runs, 'utf8').trim().split('\n').map(Number);
    expect(started.length).toBeGreaterThan(0);
    expect(started.length).toBeLessThanOrEqual(PAGES_RECORDED + 1);
    expect(Math.max(...started)).toBeLessThanOrEqual(SENDS_AT_ONCE);
  });
});
