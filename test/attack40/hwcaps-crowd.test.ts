import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseElf } from '../../dist/attest/elf.js';
import { neededObjects } from '../../dist/attest/libraries.js';
import { WardenError } from '../../dist/error.js';
import { buildLibrary, buildNativeServer } from '../helpers/native-server.js';
import { tempDir } from '../helpers/warden.js';

// Review 17: attest/libraries.ts keeps every glibc-hwcaps variant of a search directory (ld.so picks one by CPU),
// but reads only the first 64 entries readdir returns of `glibc-hwcaps/`, silently. ld.so looks only at the
// names it supports (x86-64-v4, -v3, -v2 here). Whoever can write in a RUNPATH directory of a digested library
// (the case ADR 0065 digests: a pyenv tree under a home) plants glibc-hwcaps/x86-64-v2/libwl.so among enough
// other entries: ld.so loads the plant, the warden never resolves nor digests it, at any launch (the ADR says the
// next launch digests a planted variant and refuses it). A plant that itself loads the resolved library also
// passes the maps check. The warden must look at every variant ld.so may take, or refuse the directory.

let dir: string;
let server: string;
let plant: string;

beforeAll(() => {
  dir = tempDir('warden-i40-hw-');
  ({ server } = buildNativeServer(path.join(dir, 'native')));
  const hw = path.join(dir, 'native/lib/glibc-hwcaps');
  fs.mkdirSync(path.join(hw, 'x86-64-v2'), { recursive: true });
  plant = path.join(hw, 'x86-64-v2/libwl.so');
  buildLibrary(plant, 'native-planted');
  // Other entries until readdir lists the variant after the 64th (ext4 lists by a hash of the name: a few hundred
  // at most; tmpfs in creation order: 64).
  for (let i = 0; i < 2000 && fs.readdirSync(hw).indexOf('x86-64-v2') < 64; i++) fs.mkdirSync(path.join(hw, `junk${i}`));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a glibc-hwcaps directory crowded with other entries', () => {
  it('does not hide the variant ld.so loads from the warden', () => {
    // The case: readdir lists the variant after the 64th entry (else this host's filesystem orders otherwise).
    expect(fs.readdirSync(path.dirname(path.dirname(plant))).indexOf('x86-64-v2')).toBeGreaterThanOrEqual(64);
    // ld.so takes the planted variant (this CPU supports x86-64-v2): the server says which build it got.
    const direct = execFileSync('sh', ['-c', '"$0" </dev/null 2>&1 >/dev/null', server], { encoding: 'utf8', timeout: 10_000 });
    expect(direct).toContain('library native-planted');
    let view: string[] | string;
    try {
      view = neededObjects(server, parseElf(server)).map((o) => o.realpath);
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      view = err.code;
    }
    expect(view === 'LIBRARY_PATH_UNSUPPORTED' || (Array.isArray(view) && view.includes(fs.realpathSync(plant))), `the warden's view: ${JSON.stringify(view)}`).toBe(true);
  });
});
