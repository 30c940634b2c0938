import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { INITIALIZE, NODE, RawSession, SERVERS, WARDEN, auditEvents, cli, tempDir } from '../helpers/warden.js';

// Review 17: ADR 0065 resolves what ld.so maps before a native program's first instruction (PT_INTERP, DT_NEEDED
// through RPATH/RUNPATH, ld.so.cache, the default directories) and digests every object that is not the system's.
// It never reads /etc/ld.so.preload, which ld.so reads for every dynamic program and whose libraries it maps
// (and whose constructors it runs) before any DT_NEEDED one, wherever they lie. A preload naming a library under
// /tmp, /opt or a home (an agent, a leftover, or a planted entry in a file only root should write) is loaded into
// every server the warden launches, undigested, and the post-spawn maps check (launch/mapped-files.ts) neither
// requires nor refuses it: the launch is audited "allow". The file is made here in a private mount namespace
// (an overlay on /etc seen only by the warden started inside it), so nothing else on the machine sees it.

const SERVER = path.join(SERVERS, 'basic.mjs');
let dir: string;
let home: string;
let marker: string;
let wrap: string[];

beforeAll(() => {
  dir = tempDir('warden-i40-preload-');
  ({ dir } = copyOfRunTemplate(`attack40: add one ${NODE} ${SERVER}`, (d) => {
    const add = cli(path.join(d, 'home'), ['add', 'one', '--yes', '--', NODE, SERVER]);
    expect(add.code, add.stderr).toBe(0);
  }, dir));
  home = path.join(dir, 'home');
  marker = path.join(dir, 'marker.txt');
  const lib = path.join(dir, 'opt/libagent.so'); // not a system directory: ADR 0065 would digest it
  fs.mkdirSync(path.dirname(lib));
  execFileSync('cc', ['-shared', '-fPIC', `-DMARKER=${JSON.stringify(marker)}`, '-o', lib, path.join(SERVERS, 'attack40/preload-marker.c')]);
  for (const d of ['etc-upper', 'etc-work']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'etc-upper/ld.so.preload'), `${lib}\n`);
  const mount = `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/etc-upper,workdir=${dir}/etc-work /etc && exec "$@"`;
  wrap = ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', mount, 'sh'];
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ranIn = (): string[] => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean) : []);

describe('a library named in /etc/ld.so.preload outside the system directories', () => {
  it('is never loaded undigested into a server: the launch is refused and the server never ran it', async () => {
    // `add` (in the template) launched the server to list its surface, outside the namespace: only this run counts.
    const before = auditEvents(home).length;
    const s = new RawSession(home, 'one', process.env, wrap);
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    const { code } = await s.exited;
    // The preload took effect in the namespace: the warden's own node loaded it (so this test cannot pass because
    // the overlay failed).
    expect(ranIn().some((l) => l.includes(WARDEN)), ranIn().join('\n')).toBe(true);
    // What must hold: the library is judged like any non-system object ld.so maps at start (NOT_ALLOWLISTED, as a
    // RUNPATH library is), or the warden, which loaded it itself, refuses to vouch for anything (WARDEN_PRELOADED).
    expect(ranIn().filter((l) => l.includes(SERVER))).toEqual([]);
    expect(answer.error, JSON.stringify(answer)).toMatchObject({ data: { code: expect.stringMatching(/^(NOT_ALLOWLISTED|WARDEN_PRELOADED)$/) } });
    expect(code).toBe(3);
    expect(auditEvents(home).slice(before).filter((e) => e.event === 'launch' && e.decision === 'allow')).toEqual([]);
  });
});
