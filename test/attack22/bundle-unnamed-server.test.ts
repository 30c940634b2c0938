import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServer, auditEvents, cli, launchAndClose, refusedInitialize, tempDir } from '../helpers/warden.js';
import { keyPair, machine, serverCopy, snapshot, type KeyPair } from '../bundle/helpers.js';
import { member, readHomeJson, readJson, type BundleJson } from '../helpers/json-docs.js';

// Issue 26 item 6: a trust bundle is trusted for the servers it names, and for nothing else on the machine. A
// bundle signer whose bundle names only a decoy must not re-allowlist a file of a server this machine's operator
// set up: apply admits an artifact only when a server the bundle names runs it here (its command resolved as
// `run` resolves it), and never changes the digest of a path that a server the bundle does not name runs.

let root: string;
let key: KeyPair;
let n = 0;
/** The operator's script, changed on disk after its server 'own' was enrolled on `operator`. */
let ownScript: string;
let operator: string;
/** The signer's machine: 'decoy' (its own copy of the server) and 'runs-own' (the operator's changed script). */
let signer: string;

/** A fresh directory under root with a copy of the basic server; returns its script's real path. */
function copy(name: string): string {
  const dir = path.join(root, `${name}-${++n}`);
  fs.mkdirSync(dir);
  return fs.realpathSync(serverCopy(dir));
}

// Set-up enrolls three servers (each a launch and a lock capture): slow on a loaded machine, hence its own bound.
beforeAll(() => {
  root = tempDir('warden-attack22-bundle-');
  key = keyPair(root, 'signer');
  ownScript = copy('own');
  operator = machine(root, 'operator');
  addServer(operator, 'own', ['node', ownScript]);
  fs.appendFileSync(ownScript, '\n// changed after the operator enrolled it\n');
  signer = machine(root, 'signer');
  addServer(signer, 'decoy', ['node', copy('decoy')]);
  addServer(signer, 'runs-own', ['node', ownScript]);
}, 120_000);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** `bundle create --servers IDS` on `home`, `edit`ed as JSON, then signed with the pinned key. */
function signed(home: string, ids: string[], edit: (b: BundleJson) => void = () => {}): string {
  const out = path.join(root, `bundle-${++n}.json`);
  const c = cli(home, ['bundle', 'create', '--servers', ids.join(','), '--out', out]);
  if (c.code !== 0) throw new Error(`bundle create failed (${c.code}): ${c.stderr}`);
  const b = readJson<BundleJson>(out);
  edit(b);
  fs.writeFileSync(out, JSON.stringify(b, null, 2) + '\n');
  const s = cli(home, ['bundle', 'sign', out, '--key', key.priv]);
  if (s.code !== 0) throw new Error(`bundle sign failed (${s.code}): ${s.stderr}`);
  return out;
}

/** Apply is refused with `code` (exit 3), naming `names`, every trust file of `home` unchanged and audited. */
function refused(home: string, bundle: string, code: string, names: string[]): void {
  const before = snapshot(home);
  const r = cli(home, ['bundle', 'apply', bundle, '--key', key.pub]);
  expect(r.stderr).toContain(code);
  for (const name of names) expect(r.stderr).toContain(name);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.code).toBe(3);
  expect(snapshot(home)).toEqual(before);
  expect(auditEvents(home).at(-1)).toMatchObject({ event: 'bundle_rejected', reason: code });
}

async function ownStillRefused(home: string, script: string): Promise<void> {
  const { error, code } = await refusedInitialize(home, 'own');
  expect(error.data.code).toBe('DIGEST_MISMATCH');
  expect(code).not.toBe(0);
  for (const p of [script, path.dirname(script)]) expect(readHomeJson(home, 'allowlist.json').entries.filter((e) => e.path === p).map((e) => e.note)).toEqual(["added by 'mcp-warden add own'"]);
}

describe('a trust bundle re-trusts only what the servers it names run', () => {
  it("a bundle naming only a decoy, whose lock entry carries a new digest for the operator's own script, is refused: allowlist unchanged, the operator's server still refused", async () => {
    // The changed script's artifacts (script and package tree), as 'runs-own' recorded them, moved into the
    // decoy's warden.lock entry; 'runs-own' itself left out of the bundle.
    const bundle = signed(signer, ['decoy', 'runs-own'], (b) => {
      const carried = member(b.wardenLock, 'runs-own').artifacts.filter((a) => a.kind !== 'executable');
      expect(carried.map((a) => a.path)).toContain(ownScript);
      member(b.wardenLock, 'decoy').artifacts.push(...carried);
      for (const part of ['servers', 'toolsLock', 'wardenLock'] as const) delete b[part]['runs-own'];
    });
    expect(Object.keys(readJson<BundleJson>(bundle).servers)).toEqual(['decoy']);
    refused(operator, bundle, 'BUNDLE_ARTIFACT_NOT_RUN', [ownScript, "'decoy'", "'own'"]);
    await ownStillRefused(operator, ownScript);
  }, 60_000);

  it("a bundle naming a server that runs the operator's own script itself is refused: a path a server it does not name runs keeps this machine's digest", async () => {
    const bundle = signed(signer, ['runs-own']);
    refused(operator, bundle, 'BUNDLE_ARTIFACT_SHARED', [`the script ${ownScript} (run by 'own'`, `the package ${path.dirname(ownScript)} (run by 'own'`, `mcp-warden allowlist add ${ownScript}`]);
    await ownStillRefused(operator, ownScript);
  }, 60_000);

  it("a bundle naming a server that lists the operator's own script among its modules is refused: the kind it is run as does not matter", async () => {
    const bundle = signed(signer, ['decoy'], (b) => {
      const script = member(b.wardenLock, 'decoy').artifacts.find((a) => a.kind === 'script');
      const allowed = readHomeJson(signer, 'allowlist.json').entries.find((e) => e.path === ownScript);
      if (!script || !allowed) throw new Error("the signer's decoy has no script, or its allowlist no entry for the own script");
      const own = { kind: 'module', path: ownScript, sha256: script.sha256 };
      member(b.servers, 'decoy').modules = [ownScript];
      member(b.wardenLock, 'decoy').artifacts.push(own);
      b.artifacts.push({ path: ownScript, kind: 'module', accept: [allowed.sha256] });
    });
    refused(operator, bundle, 'BUNDLE_ARTIFACT_SHARED', [`the module ${ownScript} (run by 'own'`]);
    await ownStillRefused(operator, ownScript);
  }, 60_000);

  it('once the operator allowlisted the changed files for its own server, a bundle naming another server that runs them applies, and both run', async () => {
    const home = path.join(root, `operator-copy-${++n}`);
    fs.cpSync(operator, home, { recursive: true });
    fs.chmodSync(home, 0o700);
    for (const p of [ownScript, path.dirname(ownScript)]) expect(cli(home, ['allowlist', 'add', p]).code).toBe(0);
    const r = cli(home, ['bundle', 'apply', signed(signer, ['runs-own']), '--key', key.pub]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(auditEvents(home).at(-1)).toMatchObject({ event: 'bundle_applied', servers: ['runs-own'] });
    await launchAndClose(home, 'own');
    await launchAndClose(home, 'runs-own');
  }, 60_000);
});
