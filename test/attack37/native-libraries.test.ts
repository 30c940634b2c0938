import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLibrary, buildNativeServer } from '../helpers/native-server.js';
import { auditEvents, cli, INITIALIZE, RawSession, refusedInitialize, tempDir } from '../helpers/warden.js';

// Review 13 (HIGH): only an ELF executable was digested, never the shared libraries it loads. A server whose
// executable finds its library through DT_RUNPATH=$ORIGIN/lib (pyenv's python3.11 and libpython3.11.so, here a
// small C server and libwl.so) ran a rebuilt library with the launch audited "allow". The library must be
// digested at `add`, allowlisted, and compared at each `run` like a script.

let dir: string;
let home: string;
let server: string;
let lib: string;
let added: ReturnType<typeof cli>;

const sha256 = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

beforeAll(() => {
  dir = tempDir('warden-i37-');
  home = path.join(dir, 'home');
  ({ server, lib } = buildNativeServer(path.join(dir, 'native')));
  added = cli(home, ['add', 'native', '--yes', '--', server]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The allowlist's entries of kind `library`. */
function libraryEntries(): Array<{ path: string; sha256: string }> {
  const list = JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: Array<{ path: string; kind: string; sha256: string }> };
  return list.entries.filter((e) => e.kind === 'library');
}

/** Runs the server through the warden (its initialize answered with a result, exit 0) and returns which build of
 *  the library ran, as the server says on its stderr (relayed by the warden). */
async function servedLibrary(): Promise<string | undefined> {
  const s = new RawSession(home, 'native');
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  expect(answer.result, s.stderr).toBeDefined();
  s.close();
  const { code } = await s.exited;
  expect(code, s.stderr).toBe(0);
  return /library (native-v\d)/.exec(s.stderr)?.[1];
}

describe('a native executable whose library lies beside it (DT_RUNPATH=$ORIGIN/lib)', () => {
  it('is enrolled with its library digested into the allowlist, and runs', async () => {
    expect(added.code, added.stderr + added.stdout).toBe(0);
    expect(libraryEntries()).toEqual([expect.objectContaining({ path: fs.realpathSync(lib), sha256: sha256(lib) })]);
    expect(await servedLibrary()).toBe('native-v1');
    const allowed = auditEvents(home).filter((e) => e.event === 'launch' && e.decision === 'allow').at(-1) as { artifacts: Array<{ kind: string; path: string }> };
    expect(allowed.artifacts.map((a) => a.kind)).toEqual(['executable', 'library']);
  });

  it('is refused at run with DIGEST_MISMATCH once its library was rebuilt, and nothing of the new library answers', async () => {
    const original = `${lib}.original`;
    fs.copyFileSync(lib, original);
    buildLibrary(lib, 'native-v2');
    try {
      const { error, code, session } = await refusedInitialize(home, 'native');
      expect(error.data.code).toBe('DIGEST_MISMATCH');
      expect(session.stderr).toContain(`library ${fs.realpathSync(lib)} changed`);
      expect(code).toBe(3);
      expect(session.stdoutBytes.toString() + session.stderr).not.toContain('native-v2');
      const refused = auditEvents(home).filter((e) => e.event === 'launch').at(-1);
      expect(refused).toMatchObject({ decision: 'refuse', code: 'DIGEST_MISMATCH' });
    } finally {
      fs.renameSync(original, lib);
    }
    expect(await servedLibrary()).toBe('native-v1');
  });

  it('is refused with NOT_ALLOWLISTED when its allowlist lacks the library (an entry made before libraries were attested)', async () => {
    const file = path.join(home, 'allowlist.json');
    const before = fs.readFileSync(file, 'utf8');
    const list = JSON.parse(before) as { entries: Array<{ kind: string }> };
    fs.writeFileSync(file, JSON.stringify({ ...list, entries: list.entries.filter((e) => e.kind !== 'library') }, null, 2));
    try {
      const { error, code, session } = await refusedInitialize(home, 'native');
      expect(error.data.code).toBe('NOT_ALLOWLISTED');
      expect(session.stderr).toContain(`library ${fs.realpathSync(lib)} (sha256 ${sha256(lib)}) is not in the allowlist`);
      expect(code).toBe(3);
    } finally {
      fs.writeFileSync(file, before);
    }
  });

  it('is refused with LIBRARY_NOT_FOUND when its library is gone (ld.so could not start it either)', async () => {
    const aside = `${lib}.aside`;
    fs.renameSync(lib, aside);
    try {
      const { error, code } = await refusedInitialize(home, 'native');
      expect(error.data.code).toBe('LIBRARY_NOT_FOUND');
      expect(error.message).toBe("mcp-warden refused to launch server 'native' (LIBRARY_NOT_FOUND): the shared libraries its executable loads cannot be found or attested. The warden's stderr says what it found. Run 'mcp-warden status native' for details.");
      expect(code).toBe(3);
    } finally {
      fs.renameSync(aside, lib);
    }
  });

  it('runs a rebuilt library once the operator allowlists it with `allowlist add` (recorded as a library)', async () => {
    buildLibrary(lib, 'native-v2');
    const r = cli(home, ['allowlist', 'add', lib]);
    expect(r.code, r.stderr).toBe(0);
    expect(libraryEntries()).toContainEqual(expect.objectContaining({ path: fs.realpathSync(lib), sha256: sha256(lib) }));
    expect(await servedLibrary()).toBe('native-v2');
  });
});
