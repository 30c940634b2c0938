import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServer, alive, auditEvents, NODE, refusedInitialize, SERVERS, tempDir } from '../helpers/warden.js';

// The re-stat of everything digested (src/attest/recheck.ts) runs from the server's first line, and nothing from
// the server reaches the client before it passed (docs/adr/0005, 0019). The server here changes a file of its own
// package tree after launch; the module guard does not see it (the file is already loaded).

let dir: string;
let home: string;
let marker: string;
let victim: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  marker = path.join(dir, 'marker');
  const servers = path.join(dir, 'servers');
  fs.cpSync(SERVERS, servers, { recursive: true });
  victim = path.join(servers, 'lib/rpc.mjs');
  addServer(home, 'tamper', [NODE, path.join(servers, 'tamper-tree.mjs')], ['--env', `TAMPER_MARKER=${marker}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the re-check of the digested files after launch', () => {
  it('refuses the held initialize result of a server whose package tree changed before it answered', async () => {
    fs.writeFileSync(marker, 'answer');
    const r = await refusedInitialize(home, 'tamper');
    expect(r.error.message).toContain(`${victim}, in the package tree ${path.dirname(path.dirname(victim))}, changed after it was digested`);
    expect(r.code).toBe(3);
    expect(r.session.lines()).toHaveLength(1); // the refusal: no byte of the server's
  });

  it('closes the session at the first line, without waiting for an answer to initialize that never comes', async () => {
    // The server writes one notification and then nothing. A re-check that only started (or was only looked at)
    // when the handshake ends would never run: the client would wait for its initialize answer forever.
    fs.writeFileSync(marker, 'silent');
    const r = await refusedInitialize(home, 'tamper');
    expect(r.error.message).toContain(`${victim}, in the package tree`);
    expect(r.error.message).toContain('changed after it was digested (between digest and load); the session was closed');
    expect(r.code).toBe(3);
    expect(r.session.lines()).toHaveLength(1);
    const launch = auditEvents(home).filter((e) => e.event === 'launch').pop();
    expect(alive(launch?.pid as number)).toBe(false);
  });
});
