import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';

// review 12: the grant policy (src/sandbox/grant-policy.ts) refuses write grants over the directories the warden
// (or root) looks programs up in, since a confined server writes as the warden's uid and what it plants there runs
// outside every namespace. The fleet daemon's git (src/fleet/fetch-git.ts) keeps the user's global git
// configuration on purpose (credential helpers, ssh): ~/.gitconfig and $XDG_CONFIG_HOME/git/config name programs
// git runs (`credential.helper = !sh -c ...`, `core.sshCommand`), and the -c hardening overrides neither. A write
// grant over them (a git server's natural grant) lets a confined server choose a program the unconfined daemon
// runs on its next fetch. Asserts that such a grant is refused when set, like one over the trusted path.

let dir: string;
let home: string;
let user: string;
const env = (): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, HOME: user };
  delete e.XDG_CONFIG_HOME;
  // npx and npm run set npm_config_userconfig for what they start: npm's user configuration is then that file.
  delete e.npm_config_userconfig;
  delete e.NPM_CONFIG_USERCONFIG;
  return e;
};

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  user = path.join(dir, 'user');
  fs.mkdirSync(path.join(user, '.config/git'), { recursive: true });
  fs.writeFileSync(path.join(user, '.gitconfig'), '[user]\n\tname = someone\n');
  addServerWarm(home, 'git', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("a write grant over the git configuration the fleet daemon's git reads", () => {
  it.each([['.gitconfig'], ['.config/git']])('~/%s is refused when set (SANDBOX_INVALID) and the sandbox is not changed', (rel) => {
    const r = cli(home, ['sandbox', 'git', '--network', 'none', '--allow-write', path.join(user, rel)], { env: env() });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.code).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.git.sandbox).toBeUndefined();
  });
});

// The neighbours (fix of review 12): npm's user configuration names the shell and scripts the warden's npm runs;
// a grant of the whole home or ~/.config holds them all (docs/guide.md says so).
describe("a write grant over npm's user configuration, or holding the run-time configuration", () => {
  it.each([['.npmrc'], ['.config'], ['']])('~/%s is refused when set (SANDBOX_INVALID) and the sandbox is not changed', (rel) => {
    const r = cli(home, ['sandbox', 'git', '--network', 'none', '--allow-write', path.join(user, rel)], { env: env() });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.code).toBe(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.git.sandbox).toBeUndefined();
  });

  it('the directory of $NPM_CONFIG_USERCONFIG is refused when set (SANDBOX_INVALID)', () => {
    const npmDir = path.join(dir, 'npm-conf');
    fs.mkdirSync(npmDir, { recursive: true });
    const r = cli(home, ['sandbox', 'git', '--network', 'none', '--allow-write', npmDir], { env: { ...env(), NPM_CONFIG_USERCONFIG: path.join(npmDir, 'userrc') } });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: .*npm's user configuration/);
    expect(r.code).toBe(2);
  });
});
