import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// ATTACK (audit, stderr, alerts): a tool that claims a less-gated tier is blocked and reported once per tool and
// digest (proxy/judge.ts: `wideningReported` holds `name|hTool`), as one audit event (an alert), one stderr line
// and one alert to every sink each, with no cap per listing (the drift lines of the same listing are cut at ten)
// and no cap per session. A server whose N locked tools all gain `readOnlyHint: true`, with a description that
// changes at every listing (new digests), and that sends notifications/tools/list_changed after each tools/list
// answer, makes every re-list cost the warden N audit events, each written under the log's lock with an fsync
// (~5 ms here), N + N stderr lines, N alerts (a process each for an exec or journald sink), and N more keys kept.
// The re-lists come much faster than the writes: the events queue in memory (recorder.ts chains them) and `run`
// waits for all of them when the session ends. 300 tools, 20 re-lists (~28 KiB a listing): 6,300 events; when
// the client has seen the 20th list_changed, 5 are written and 6,300 stderr lines printed (measured); 10 s after
// the client closed the warden is still writing (2,896 written), and a warden killed meanwhile loses the rest.
// (The stderr count: N report lines per listing; the drift lines of a listing stop at ten.) Asserts the secure behaviour: the reports of one server are bounded
// (as refused messages are: five, then counted), so the warden exits within a few seconds of the client.

const TOOLS = 300;
const RELISTS = 20;

let dir: string;
let home: string;
let stormFile: string;
// Both servers added (STORM_FILE absent: it is only read), once; each test gets a copy (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  addServer(h, 'widening', [NODE, path.join(SERVERS, 'attack12', 'widening-storm.mjs')], ['--env', `STORM_FILE=${path.join(d, 'storm')}`, '--env', `TOOLS_N=${TOOLS}`]);
  addServer(h, 'flipping', [NODE, path.join(SERVERS, 'attack12', 'widening-storm.mjs')], ['--env', `STORM_FILE=${path.join(d, 'storm')}`, '--env', 'TOOLS_N=2']);
});
beforeEach(() => {
  dir = tempDir();
  stormFile = path.join(dir, 'storm');
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Initializes a session of `id` and waits for `n` of its list_changed notifications. */
async function stormed(id: string, n: number): Promise<RawSession> {
  const s = new RawSession(home, id);
  s.send(INITIALIZE + '\n');
  await s.message(1);
  await s.until(() => s.lines().filter((l) => l.includes('notifications/tools/list_changed')).length >= n, `${n} list_changed notifications`, 60_000);
  return s;
}

describe('attack12: a tier-widening storm', () => {
  it('bounds what one server makes the warden audit and print, and exits soon after the client closes', async () => {
    fs.writeFileSync(stormFile, String(RELISTS));
    const s = await stormed('widening', RELISTS);
    const writtenThen = auditEvents(home).filter((e) => e.event === 'tier_widening_blocked').length;
    const t = performance.now();
    s.close();
    const exited = await Promise.race([s.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 10_000))]);
    const exitMs = performance.now() - t;
    if (!exited) s.proc.kill('SIGKILL');
    await s.exited;
    const written = auditEvents(home).filter((e) => e.event === 'tier_widening_blocked').length;
    const lines = s.stderr.split('\n').filter((l) => l.includes('claims a less-gated tier')).length;
    console.log(`${RELISTS + 1} listings of ${TOOLS} widened tools: ${writtenThen} tier_widening_blocked events written when the client saw the last list_changed, ${written} by the end; ${lines} stderr lines; ${exited ? `exit ${exitMs.toFixed(0)} ms after the client closed` : 'still running 10 s after the client closed (killed)'}`);
    expect(exited).toBe(true);
    expect(exitMs).toBeLessThan(5000);
  }, 60_000);
});

// The same server with two tools: its surface is another at every listing, and every re-list was a `surface`
// event (the audit log's lock and an fsync) and an alert, without a bound. A session records at most 64 surfaces
// after the handshake's, then one stderr line; every listing is still judged.
describe('attack12: a surface that changes at every re-list', () => {
  it('records at most 64 changed surfaces in a session after the handshake, and says so once', async () => {
    fs.writeFileSync(stormFile, '90');
    const s = await stormed('flipping', 90);
    s.send('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await s.message(2);
    s.close();
    await s.exited;
    const surfaces = auditEvents(home).filter((e) => e.event === 'surface' && e.server === 'flipping' && e.source !== 'lock'); // not add's
    expect(surfaces.filter((e) => e.source === 'handshake')).toHaveLength(1);
    expect(surfaces.length).toBe(1 + 64);
    expect(s.stderr.split('\n').filter((l) => l.includes('changed more than 64 times in this session'))).toHaveLength(1);
  }, 90_000);
});
