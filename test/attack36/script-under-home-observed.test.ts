import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warmNodeDigest } from '../helpers/warm-digest.js';
import { NODE, ROOT, SERVERS, cli } from '../helpers/warden.js';

// Review 13, left open: the enrollment launch overlays the user's home to see what a server writes there
// (src/sandbox/observe.ts, docs/adr/0063). A server whose SCRIPT lies under the home (a checkout it runs from,
// node itself elsewhere) left the whole home unobserved ("it holds the server's code"): its start-up writes
// anywhere in the home reached the real files and were missing from the proposal. The home must stay overlaid,
// with only the script's package (and the node_modules node may load from above it) bound back, real.

let dir: string;
let home: string;
let user: string;
let code: string;
let added: ReturnType<typeof cli>;

beforeAll(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-i36-script-');
  home = path.join(dir, 'home');
  user = path.join(dir, 'user');
  code = path.join(user, 'checkout/server');
  for (const d of ['i29', 'lib']) fs.mkdirSync(path.join(code, d), { recursive: true });
  for (const f of ['i29/writes-at-start.mjs', 'lib/rpc.mjs', 'package.json']) fs.copyFileSync(path.join(SERVERS, f), path.join(code, f));
  fs.writeFileSync(path.join(user, '.bashrc-i29'), 'the real file\n');
  fs.writeFileSync(`/tmp/i29-victim-${path.basename(user)}`, 'victim\n');
  warmNodeDigest(home, 'checkout', NODE);
  added = cli(home, ['add', 'checkout', '--yes', '--', NODE, path.join(code, 'i29/writes-at-start.mjs')], { env: { ...(process.env as Record<string, string>), HOME: user } });
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const f of ['victim', 'dropped']) fs.rmSync(`/tmp/i29-${f}-${path.basename(user)}`, { force: true });
});

describe('a server whose script lies under the user\'s home', () => {
  it('enrolls with the home observed: its start-up write to the home never reaches the real file and is in the proposal', () => {
    expect(added.code, added.stderr + added.stdout).toBe(0);
    expect(fs.readFileSync(path.join(user, '.bashrc-i29'), 'utf8')).toBe('the real file\n');
    const p = JSON.parse(fs.readFileSync(path.join(home, 'proposals/checkout.sandbox.json'), 'utf8')) as { writes: { path: string; kind: string }[]; observed: { dirs: string[]; kept: string[]; notObserved: { dir: string }[] } };
    expect(p.writes).toEqual(expect.arrayContaining([{ path: path.join(user, '.bashrc-i29'), kind: 'write' }]));
    // The home lies in /var/tmp here, so it is observed as part of /var/tmp's overlay.
    expect(p.observed.dirs.filter((d) => user.startsWith(`${d}/`) || d === user)).toHaveLength(1);
    expect(p.observed.notObserved.filter((n) => user.startsWith(`${n.dir}/`) || n.dir === user)).toEqual([]);
    // Only its package is kept real (its code, which the module guard checks by inode), never the whole home.
    // (The warden's own install is code too, kept real when it lies in an observed place: a clone of this
    // repository under /tmp, as on CI; it is not the server's.)
    expect(p.observed.kept.filter((k) => k !== ROOT)).toEqual([code]);
  });
});
