import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';

// review 12: a sandbox hides /run (src/sandbox/plan.ts) because a unix socket on a read-only mount still accepts
// connections: the user's session bus (/run/user/UID/bus) starts any command as a transient unit of the user's
// systemd (`systemd-run --user`), outside every namespace; docker's socket is root. The grant policy
// (src/sandbox/grant-policy.ts) refuses a read grant of /proc, /sys and /dev for what they show, but admits
// `--allow-read /run` or `/run/user/UID`, which hand those sockets back. Asserts that a grant reaching /run is
// refused when set, like one reaching /proc.

let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a read grant reaching /run, which the sandbox hides for its sockets', () => {
  // ['/var/run']: the neighbour (fix of review 12), a link to /run that no name comparison catches.
  it.each([['/run'], [`/run/user/${process.getuid?.() ?? 1000}`], ['/var/run']])('--allow-read %s is refused when set (SANDBOX_INVALID) and not written to servers.json', (grant) => {
    const r = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-read', grant]);
    expect(r.stderr).toMatch(/SANDBOX_INVALID: .*reaches \/run, where the host's services listen/);
    expect(r.code).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.probe.sandbox).toBeUndefined();
  });
});
