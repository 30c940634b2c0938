import { spawnSync } from 'node:child_process';
import { createHash, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyBundle } from '../../src/fleet/apply.js';
import { openHome } from '../../src/store/home.js';
import { resolveHome } from '../../src/store/paths.js';
import { WARDEN, auditEvents, cli, connectClient } from '../helpers/warden.js';
import { TRUST_FILES, keyPair, machine, sharedMachineA, signedBundle, snapshot, tempDir, type KeyPair } from './helpers.js';

// A bundle replaces five trust files "in one step" (docs/bundles.md). A write that fails before the change is
// decided leaves every file as it was; a failure after it (a crash between two renames, here a rename that fails)
// is completed from commit.journal by the next command, `run` included, before anything reads the files.

let root: string;
let key: KeyPair;
let bundle: string;
let n = 0;
const freshB = (): string => machine(root, `B${++n}`);
const env = ['--env', 'basic.SECRET_TOKEN=machine-b-value'];

beforeAll(() => {
  root = tempDir('warden-one-step-');
  const homeA = sharedMachineA(root).homeA;
  key = keyPair(root, 'signer');
  bundle = signedBundle(homeA, path.join(root, 'setup.bundle.json'), key);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const leftovers = (home: string): string[] => fs.readdirSync(home).filter((f) => f.endsWith('.next') || f === 'commit.journal');
const sha = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Applies the bundle in this process, with the rename of `failing` (a trust file's name) failing as EIO would. */
async function applyWithFailingRename(home: string, failing: string): Promise<unknown> {
  const rename = fs.renameSync;
  vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
    if (path.basename(String(to)) === failing) throw Object.assign(new Error(`EIO: i/o error, rename '${String(from)}' -> '${String(to)}'`), { code: 'EIO' });
    rename(from, to);
  });
  const paths = resolveHome(home);
  openHome(paths, true);
  const policy = { key: createPublicKey(fs.readFileSync(key.pub, 'utf8')), keyFile: key.pub };
  return applyBundle(paths, bundle, policy, { allowRollback: false, env: new Map([['basic', new Map([['SECRET_TOKEN', 'machine-b-value']])]]), passEnv: new Map(), now: new Date() }).then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('bundle apply: one step', () => {
  it('a trust file that cannot be written in full (file size limit: a short write, then EFBIG) refuses the apply with every trust file as it was and nothing staged left', () => {
    // The limit sits below the size warden.lock will have and above every other file the apply writes first.
    const probe = freshB();
    expect(cli(probe, ['bundle', 'apply', bundle, '--key', key.pub, ...env]).code).toBe(0);
    const sizes = Object.fromEntries(TRUST_FILES.map((f) => [f, fs.statSync(path.join(probe, f)).size]));
    const limit = sizes['warden.lock']! - 1;
    expect(Object.entries(sizes).filter(([f, s]) => f !== 'warden.lock' && s > limit)).toEqual([]);

    const home = freshB();
    const before = snapshot(home);
    const r = spawnSync('prlimit', [`--fsize=${limit}`, process.execPath, WARDEN, '--home', home, 'bundle', 'apply', bundle, '--key', key.pub, ...env], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toMatch(/FILE_UNWRITABLE: The trust bundle with serial \d+ was not applied: .*warden\.lock could not be written \(EFBIG\), so nothing was changed/);
    expect(r.status).toBe(3);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(home)).toEqual(before);
    expect(leftovers(home)).toEqual([]);
    expect(auditEvents(home).at(-1)).toMatchObject({ event: 'bundle_rejected', reason: 'FILE_UNWRITABLE' });
    // Without the limit the same bundle applies: the refusal left nothing in its way.
    expect(cli(home, ['bundle', 'apply', bundle, '--key', key.pub, ...env]).code).toBe(0);
  });

  it('what an apply killed before its commit point staged is not used, and the next change clears it', () => {
    const home = freshB();
    fs.writeFileSync(path.join(home, 'allowlist.json.next'), '{"version":1,"entries":[]}\n', { mode: 0o600 });
    fs.writeFileSync(path.join(home, 'warden.lock.next.0a1b2c3d4e5f.tmp'), '{"trunc', { mode: 0o600 });
    const before = snapshot(home);
    expect(cli(home, ['status']).code).toBe(0);
    expect(snapshot(home)).toEqual(before);
    expect(cli(home, ['bundle', 'apply', bundle, '--key', key.pub, ...env]).code).toBe(0);
    expect(fs.readdirSync(home).filter((f) => f.includes('.next'))).toEqual([]);
  });

  it('a rename that fails after the change was decided is completed by the next `run`, which then serves the bundle\'s server', async () => {
    const homeB = freshB();
    const err = await applyWithFailingRename(homeB, 'tools.lock');
    expect(err).toMatchObject({ code: 'TRUST_COMMIT_INCOMPLETE' });
    expect((err as Error).message).toMatch(/was decided but not every trust file could be replaced \(EIO\).*commit\.journal: the next mcp-warden command completes it/);
    // Half of it is in place: servers.json names the server, tools.lock is not written yet.
    expect(fs.readFileSync(path.join(homeB, 'servers.json'), 'utf8')).toContain('"basic"');
    expect(fs.existsSync(path.join(homeB, 'tools.lock'))).toBe(false);
    const journal = JSON.parse(fs.readFileSync(path.join(homeB, 'commit.journal'), 'utf8')) as { files: { name: string; sha256: string }[] };
    vi.restoreAllMocks();

    const { client } = await connectClient(homeB, 'basic');
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    expect(leftovers(homeB)).toEqual([]);
    for (const f of journal.files) expect(sha(path.join(homeB, f.name)), f.name).toBe(f.sha256);
    expect(JSON.parse(fs.readFileSync(path.join(homeB, 'bundle-state.json'), 'utf8'))).toMatchObject({ applied: { serial: expect.any(Number) } });
    expect(auditEvents(homeB).map((e) => e.event)).toContain('trust_commit_completed');
    expect(auditEvents(homeB).find((e) => e.event === 'trust_commit_completed')).toMatchObject({ what: expect.stringMatching(/^the trust bundle with serial \d+$/), files: TRUST_FILES });
  });

  it('any other command completes it first too (allowlist list shows the bundle\'s artifacts)', async () => {
    const homeB = freshB();
    expect(await applyWithFailingRename(homeB, 'warden.lock')).toMatchObject({ code: 'TRUST_COMMIT_INCOMPLETE' });
    vi.restoreAllMocks();
    const r = cli(homeB, ['allowlist', 'list', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('basic.mjs');
    expect(leftovers(homeB)).toEqual([]);
    const v = cli(homeB, ['verify', 'basic']);
    expect(v.code).toBe(0);
  });

  it('a staged file changed after the interruption is refused by every command, `run` included, until the operator resolves it', async () => {
    const homeB = freshB();
    expect(await applyWithFailingRename(homeB, 'allowlist.json')).toMatchObject({ code: 'TRUST_COMMIT_INCOMPLETE' });
    vi.restoreAllMocks();
    fs.appendFileSync(path.join(homeB, 'allowlist.json.next'), ' ');
    const before = snapshot(homeB);

    const r = cli(homeB, ['status']);
    expect(r.stderr).toMatch(/TRUST_COMMIT_INVALID: the interrupted change \(the trust bundle with serial \d+\) recorded in .*commit\.journal cannot be completed: .*allowlist\.json\.next is not the file it recorded/);
    expect(r.code).toBe(2);
    await expect(connectClient(homeB, 'basic').then(({ client }) => client.close())).rejects.toThrow(/TRUST_COMMIT_INVALID|cannot be completed/);
    expect(snapshot(homeB)).toEqual(before);
    expect(fs.existsSync(path.join(homeB, 'commit.journal'))).toBe(true);
  });
});
