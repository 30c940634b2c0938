import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, perTestDirs } from '../helpers/warden.js';

// Review of issue 26 (class 2, the one escaper): the modules a server loaded from outside its package at `add`
// (allowlisted and recorded as its "modules") are printed with describeArtifact, raw. The server chooses their
// file names: one named `helper<ESC>[2K<CR><ESC>[8mx.mjs` erases its own line and conceals the rest on the
// operator's terminal, so the module outside the package that the warden just allowlisted is not seen.
// (describeArtifact also prints the artifacts of `add`, `import` and `install` raw: paths from client files.)

const tmp = perTestDirs();

describe('add prints the modules a server loaded through the one escaper', () => {
  it('a module file name chosen by the server holds no raw control character in add\'s output', () => {
    const moduleDir = path.join(tmp.dir, 'outside');
    const r = cli(tmp.home, ['add', 'mods', '--yes', '--env', `MODULE_DIR=${moduleDir}`, '--', NODE, path.join(SERVERS, 'attack23/modules-outside/server.mjs')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('from outside its package');
    const line = r.stdout.split('\n').find((l) => l.includes(path.join(moduleDir, 'helper'))) ?? '';
    expect(line).toMatch(/^\s+module\s/);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});
