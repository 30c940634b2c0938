import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { NODE, SERVERS, addServer, auditEvents, perTestDirs } from '../helpers/warden.js';

// `add` records the canary baselines on the lock's last launch (docs/adr/0061): after the listing of the client
// without capabilities, once the lock is written, and judged against it. The server (test/servers/attack6/
// recorder.mjs) logs every line it receives; each launch's first line is the discover probe or an initialize.

const tmp = perTestDirs();

type Line = { method?: string; params?: { capabilities?: unknown; name?: string } };

it('add of a 2025 server launches it three times (the discover probe, a client with capabilities, one without) and calls the default canary on the third, after its listing', () => {
  const log = path.join(tmp.dir, 'received.log');
  const tools = path.join(tmp.dir, 'tools.json');
  fs.writeFileSync(tools, JSON.stringify([{ name: 'note', description: 'note tool', inputSchema: { type: 'object' } }]));
  addServer(tmp.home, 'rec', [NODE, path.join(SERVERS, 'attack6/recorder.mjs')], ['--env', `TOOLS_FILE=${tools}`, '--env', `LOG_FILE=${log}`]);

  const launches: Line[][] = [];
  for (const text of fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
    const line = JSON.parse(text) as Line;
    if (line.method === 'server/discover' || line.method === 'initialize') launches.push([]);
    launches.at(-1)?.push(line);
  }
  expect(launches.map((l) => l[0]?.method)).toEqual(['server/discover', 'initialize', 'initialize']);
  expect(launches[0]).toHaveLength(1);
  expect(launches[1]?.map((l) => l.method)).toEqual(['initialize', 'notifications/initialized', 'tools/list']);
  expect(launches[1]?.[0]?.params?.capabilities).toEqual({ roots: { listChanged: true }, sampling: {}, elicitation: {} });
  // The third: the listing the lock took its conditional tools from, then one warm-up call and ten samples.
  const last = launches[2] as Line[];
  expect(last[0]?.params?.capabilities).toEqual({});
  expect(last.map((l) => l.method)).toEqual(['initialize', 'notifications/initialized', 'tools/list', ...Array<string>(11).fill('tools/call')]);
  const baseline = JSON.parse(fs.readFileSync(path.join(tmp.home, 'warden.lock'), 'utf8')).servers.rec.canaries['unknown-tool'];
  expect(baseline).toMatchObject({ samples: 10, shape: { kind: 'result', isError: false } });
  expect(last.slice(3).map((l) => l.params?.name)).toEqual(Array<string>(11).fill(baseline.tool));

  // Audited as three launches; the third ends after the lock was written (its surface event).
  const events = auditEvents(tmp.home).filter((e) => ['launch', 'exit', 'surface'].includes(e.event as string)).map((e) => [e.event, e.cause ?? e.decision ?? e.source]);
  expect(events).toEqual([['launch', 'allow'], ['exit', 'client_eof'], ['launch', 'allow'], ['exit', 'client_eof'], ['launch', 'allow'], ['surface', 'lock'], ['exit', 'client_eof']]);
});
