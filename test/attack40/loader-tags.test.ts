import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, RawSession, SERVERS, auditEvents, cli, tempDir } from '../helpers/warden.js';

// Review 17: attest/elf.ts reads DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_SONAME and DT_FLAGS_1, and ignores the other
// dynamic tags by which glibc's ld.so (2.32 and later) maps code before main: DT_AUDIT (an rtld-audit module
// named by the executable, `ld --audit`) and DT_AUXILIARY / DT_FILTER (a filtee loaded with the object that
// names it, `ld --auxiliary`). Such an object outside the system directories is neither digested at `add` nor
// judged at `run`, and the post-spawn maps check (launch/mapped-files.ts) does not know it: a rebuilt one runs
// its constructor in the server with the launch audited "allow". It must be digested like any other library.

const NATIVE = path.join(SERVERS, 'native');
const MARKED = path.join(SERVERS, 'attack40/loaded-marker.c');
let dir: string;
let marker: string;

beforeAll(() => {
  dir = tempDir('warden-i40-tags-');
  marker = path.join(dir, 'marker.txt');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Compiles the marker object `name` to `file` (through a temporary file renamed over it: a new inode). */
function marked(file: string, name: string): void {
  execFileSync('cc', ['-shared', '-fPIC', `-DMARKER=${JSON.stringify(marker)}`, `-DNAME=${JSON.stringify(name)}`, '-o', `${file}.new`, MARKED]);
  fs.renameSync(`${file}.new`, file);
}

const ran = (): string[] => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean) : []);

/** Builds the native test server in `at` (libwl.so through RUNPATH=$ORIGIN/lib) with extra flags for each. */
function build(at: string, libFlags: string[], serverFlags: string[]): string {
  fs.mkdirSync(path.join(at, 'lib'), { recursive: true });
  execFileSync('cc', ['-shared', '-fPIC', '-DWL_NAME="native-v1"', '-Wl,-soname,libwl.so', ...libFlags, '-o', path.join(at, 'lib/libwl.so'), path.join(NATIVE, 'libwl.c')]);
  const server = path.join(at, 'server');
  execFileSync('cc', ['-O1', '-o', server, path.join(NATIVE, 'server.c'), `-L${path.join(at, 'lib')}`, '-lwl', '-Wl,-rpath,$ORIGIN/lib', '-Wl,--enable-new-dtags', ...serverFlags]);
  return server;
}

/** Enrolls `server`, replaces `object` with a build that says `v2`, runs it, and returns what was seen. */
async function enrollThenReplace(id: string, server: string, object: string): Promise<{ libraries: string[]; error: unknown; code: number | null; allowed: number }> {
  const home = path.join(dir, `home-${id}`);
  const add = cli(home, ['add', id, '--yes', '--', server]);
  expect(add.code, add.stderr + add.stdout).toBe(0);
  // ld.so does load it (run directly, outside the warden): the test is about an object that runs.
  execFileSync(server, { input: '', stdio: ['pipe', 'ignore', 'ignore'], timeout: 10_000 });
  expect(ran()).toContain(`${id}-v1`);
  const list = JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: Array<{ path: string; kind: string }> };
  const libraries = list.entries.filter((e) => e.kind === 'library').map((e) => e.path);
  marked(object, `${id}-v2`);
  const s = new RawSession(home, id);
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  s.close();
  const { code } = await s.exited;
  const allowed = auditEvents(home).filter((e) => e.event === 'launch' && e.decision === 'allow').length;
  return { libraries, error: answer.error, code, allowed };
}

describe('objects ld.so maps at start through dynamic tags other than DT_NEEDED', () => {
  // Fix: an rtld-audit module can redirect every lookup ld.so makes after it (la_objsearch), so the warden refuses
  // the program at `add` (LIBRARY_PATH_UNSUPPORTED) rather than resolve through it: the secure refusal moves from
  // run (DIGEST_MISMATCH) to add, and nothing is enrolled.
  it('an rtld-audit module named by the executable (DT_AUDIT) makes add refuse the program, LIBRARY_PATH_UNSUPPORTED, enrolling nothing', () => {
    const at = path.join(dir, 'audit');
    const audit = path.join(at, 'libaudit.so');
    fs.mkdirSync(at);
    marked(audit, 'audit-v1');
    const server = build(at, [], [`-Wl,--audit=${audit}`]);
    // ld.so does load it (run directly, outside the warden): the test is about an object that runs.
    execFileSync(server, { input: '', stdio: ['pipe', 'ignore', 'ignore'], timeout: 10_000 });
    expect(ran()).toContain('audit-v1');
    const home = path.join(dir, 'home-audit');
    const add = cli(home, ['add', 'audit', '--yes', '--', server]);
    expect(add.code, add.stderr + add.stdout).toBe(3);
    expect(add.stderr).toContain('LIBRARY_PATH_UNSUPPORTED');
    expect(add.stderr).toContain('DT_AUDIT');
    expect(fs.existsSync(path.join(home, 'servers.json')) ? (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers?: Record<string, unknown> }).servers?.audit : undefined).toBeUndefined();
  });

  it('a filtee of a library (DT_AUXILIARY) is digested at add, and a rebuilt one is refused at run before it runs', async () => {
    const at = path.join(dir, 'filter');
    const filtee = path.join(at, 'lib/libfilt.so');
    fs.mkdirSync(path.join(at, 'lib'), { recursive: true });
    marked(filtee, 'filter-v1');
    const server = build(at, ['-Wl,--auxiliary=libfilt.so', '-Wl,-rpath,$ORIGIN', '-Wl,--enable-new-dtags'], []);
    const seen = await enrollThenReplace('filter', server, filtee);
    expect(ran()).not.toContain('filter-v2');
    expect(seen.libraries).toContain(fs.realpathSync(filtee));
    expect(seen.error).toMatchObject({ data: { code: 'DIGEST_MISMATCH' } });
    expect(seen.code).toBe(3);
  });
});
