import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// A server whose surface is another at every listing (test/servers/attack12/widening-storm.mjs: a description
// naming the listing) and that asks for a re-list after each answer: every re-list was a `surface` event (the
// audit log's lock and an fsync) and an alert, without a bound. A session records at most 64 surfaces after the
// handshake's, then one stderr line; every listing is still judged.

const RELISTS = 90;

let dir: string;
let home: string;
let stormFile: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  stormFile = path.join(dir, 'storm');
  addServer(home, 'flipping', [NODE, path.join(SERVERS, 'attack12', 'widening-storm.mjs')], ['--env', `STORM_FILE=${stormFile}`, '--env', 'TOOLS_N=2']);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('attack12: a surface that changes at every re-list', () => {
  it('records at most 64 changed surfaces in a session after the handshake, and says so once', async () => {
    fs.writeFileSync(stormFile, String(RELISTS));
    const s = new RawSession(home, 'flipping');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const listChanged = (): number => s.lines().filter((l) => l.includes('notifications/tools/list_changed')).length;
    await s.until(() => listChanged() >= RELISTS, `${RELISTS} list_changed notifications`, 60_000);
    s.send('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await s.message(2);
    s.close();
    await s.exited;
    const surfaces = auditEvents(home).filter((e) => e.event === 'surface' && e.source !== 'lock'); // not add's
    expect(surfaces.filter((e) => e.source === 'handshake')).toHaveLength(1);
    expect(surfaces.length).toBe(1 + 64);
    expect(s.stderr.split('\n').filter((l) => l.includes('changed more than 64 times in this session'))).toHaveLength(1);
  }, 90_000);
});
