import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';

// review 12: the grant policy (src/sandbox/grant-policy.ts protectedDirs) refuses a write grant over what the
// warden runs programs from (the system, the trusted path, its own PATH, its node, its install), but not over the
// program of an exec alert sink (servers.json `alerts: [{"type": "exec", "command": [...]}]`, any absolute path),
// which the warden runs, unconfined and as its own uid, on every alert (src/alert/sinks.ts). A confined server
// that may write the hook's directory replaces the hook, then raises an alert itself (a connection its proxy
// refuses is one): its program runs at once outside every namespace. Asserts that a write grant that is, holds or
// lies inside the directory of an exec sink's program is refused when set, like one over the trusted path.

let dir: string;
let home: string;
let hooks: string;
let scripts: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  hooks = path.join(dir, 'srv/hooks');
  fs.mkdirSync(hooks, { recursive: true });
  fs.writeFileSync(path.join(hooks, 'alert.sh'), '#!/bin/sh\ncat > /dev/null\n', { mode: 0o755 });
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  // The neighbour (fix of review 12): a script handed to an interpreter is a program the sink runs too.
  scripts = path.join(dir, 'srv/scripts');
  fs.mkdirSync(scripts, { recursive: true });
  fs.writeFileSync(path.join(scripts, 'notify.sh'), 'cat > /dev/null\n');
  config.alerts = [{ type: 'exec', command: [path.join(hooks, 'alert.sh')] }, { type: 'exec', command: ['/bin/sh', path.join(scripts, 'notify.sh')] }];
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("a write grant over an exec alert sink's program", () => {
  it.each([['its directory', () => hooks], ["the directory of a script given to the sink's interpreter", () => scripts], ['a directory holding them', () => path.dirname(hooks)]])('on %s is refused when set (SANDBOX_INVALID) and not written to servers.json', (_what, grantOf) => {
    const grant = grantOf();
    const r = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-write', grant]);
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.code).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.probe.sandbox?.write ?? []).not.toContain(grant);
  });
});
