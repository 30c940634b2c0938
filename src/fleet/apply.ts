import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { WardenError, errnoOf } from '../error.js';
import { appendAudit } from '../audit/log.js';
import type { BundleEvent } from '../audit/bundle-events.js';
import { loadAllowlist, upsertEntry, type AllowlistEntry } from '../store/allowlist.js';
import { parseBundle, type TrustBundle } from '../store/bundle/format.js';
import { MAX_SERIAL_FLOORS, loadBundleState, renderBundleState, type BundleState } from '../store/bundle/state.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, type ServerConfig, type ServersFile } from '../store/servers.js';
import { trustFileWrites } from '../store/trust-writes.js';
import { commitFiles, withFileLocks } from '../store/update.js';
import { checkLaunches, reproduceArtifacts, type Reproduced } from './reproduce.js';
import { DigestCache } from '../attest/cache.js';
import { pinnedSignerOf, verifySignature, type SignerPolicy } from './signature.js';
import { artifactsOf, entryDigest, fleetServers, retireWithdrawn, type Retired } from './retire.js';
import { endSessionsOf } from '../launch/run-records.js';
import { checkUnsignedAgreed, treeProvenance, withStorePackages } from './store-packages.js';
import { checkShared, pathsRunBy, unnamedServers } from './unnamed-runs.js';

// `bundle verify` and `bundle apply`. Apply checks, in order: the signature (before the bundle is even parsed),
// the serial against the last one applied here, the env values this machine must supply, the packages of
// store-installed servers (fetched, verified and installed into the store: store-packages.ts), every artifact's
// digest on this machine, each server's command resolved as `run` will resolve it here (it runs every artifact
// its lock entry names), no new digest for a path a server the bundle does not name runs (unnamed-runs.ts); then
// writes servers.json, allowlist.json, tools.lock, warden.lock and bundle-state.json as one step
// (store/journal.ts) under all five locks. Any refusal leaves every file (and the store) as it was and is audited (bundle_rejected).

export interface Verified {
  bundle: TrustBundle;
  /** sha256 of the bundle file, hex. */
  sha256: string;
  signer: string;
  /** The signer this machine pinned for it (pinnedSignerOf). */
  pinned: string;
}

function readOrRefuse(file: string, what: string, code: 'FILE_UNREADABLE' | 'BUNDLE_SIGNATURE_INVALID', advice: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new WardenError(code, `${what} ${file} cannot be read (${errnoOf(err) ?? String(err)}). ${advice}`);
  }
}

/** Reads FILE and FILE.sigstore.json, verifies the signature against `policy`, then parses the bundle. */
export function verifyBundleFile(file: string, policy: SignerPolicy): Verified {
  const bytes = readOrRefuse(file, 'the trust bundle', 'FILE_UNREADABLE', 'Check the path.');
  const sigFile = `${file}.sigstore.json`;
  const sig = readOrRefuse(sigFile, 'the signature of the trust bundle', 'BUNDLE_SIGNATURE_INVALID', `A bundle is applied only with its signature beside it: sign it with 'mcp-warden bundle sign ${file} --key PRIVATE.pem'.`);
  const signer = verifySignature(bytes, sig.toString('utf8'), sigFile, policy);
  return { bundle: parseBundle(bytes, file), sha256: createHash('sha256').update(bytes).digest('hex'), signer, pinned: pinnedSignerOf(policy) };
}

export interface ApplyOptions {
  allowRollback: boolean;
  /** Values this machine gives env names of the bundle's servers: id -> name -> value. */
  env: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Names of this machine's environment the operator agrees to pass to a bundle's server: id -> names. */
  passEnv: ReadonlyMap<string, readonly string[]>;
  /** Servers configured on this machine (not by a bundle) that the operator hands over to the bundle. */
  adopt?: ReadonlySet<string>;
  /** Servers installed from a package the bundle says was admitted unsigned that this machine agrees to run. */
  allowUnsigned?: readonly string[];
  now: Date;
  /** Who applies, for the audit events' `by` (default 'bundle apply'). */
  by?: string;
  /** Where the outcome (bundle_applied, bundle_rejected) goes; default: appended to the home's audit log. The
   *  daemon records it with its alert sinks and metrics. */
  record?: (e: BundleEvent) => Promise<void>;
}

export interface Applied {
  serial: number;
  servers: string[];
  previousSerial?: number;
  rollback: boolean;
  /** The machine pins another signer than when it applied its last bundle: the serial started over. */
  signerChanged?: boolean;
  signer: string;
  added: AllowlistEntry[];
  replaced: AllowlistEntry[];
  /** Servers the last applied bundle named and this one does not, removed with their lock entries, and the
   *  allowlist entries only they used (src/fleet/retire.ts). */
  retired: Retired;
  /** Servers this machine had configured itself that the operator handed over to the bundle (--adopt). */
  adopted: string[];
  /** Sessions of withdrawn servers that were running and were asked to end (their `run`'s pid). */
  endedSessions: { server: string; pid: number }[];
  /** The store entries installed (or reused) for the bundle's packages. */
  packages?: { entry: string; package: string; servers: string[]; created: boolean }[];
}

/** The serial of the last bundle applied under `pinned` (bundle-state.json `floors`; before floors were kept, the
 *  last applied one, unless it was applied under another pinned signer). */
function lastSerialOf(state: BundleState, pinned: string): number | undefined {
  if (state.floors && Object.hasOwn(state.floors, pinned)) return state.floors[pinned];
  const a = state.applied;
  return a !== undefined && (a.pinned === undefined || a.pinned === pinned) && state.floors === undefined ? a.serial : undefined;
}

/** The floors after applying `serial` under `pinned`: that signer's floor set (even lower, on a rollback), the
 *  oldest signers beyond MAX_SERIAL_FLOORS forgotten. */
function floorsAfter(state: BundleState, pinned: string, serial: number): Record<string, number> {
  const floors: Record<string, number> = { ...(state.floors ?? {}) };
  if (state.floors === undefined && state.applied?.pinned !== undefined) floors[state.applied.pinned] = state.applied.serial;
  delete floors[pinned];
  floors[pinned] = serial;
  const keys = Object.keys(floors);
  for (const k of keys.slice(0, Math.max(0, keys.length - MAX_SERIAL_FLOORS))) delete floors[k];
  return floors;
}

/** Whether the serial is a rollback admitted by --allow-rollback (else refused). Serials count within one pinned
 *  signer: once the machine pins another key or identity (a stolen key replaced), the first bundle of the new
 *  signer is admitted whatever the old one's last serial was, or a thief's bundle with the highest serial would
 *  lock every later one out. Only this machine's operator changes what it pins. */
function checkSerial(state: BundleState, serial: number, allowRollback: boolean, file: string, stateFile: string, pinned: string): boolean {
  const last = lastSerialOf(state, pinned);
  if (last === undefined || serial > last) return false;
  if (allowRollback) return true;
  throw new WardenError('BUNDLE_ROLLBACK', `the trust bundle ${file} has serial ${serial}, not above ${last}, the last one applied here (${stateFile}); nothing was changed. Apply a newer bundle, or, to go back to an older trust state on purpose, add --allow-rollback (audited).`);
}

function serverConfig(id: string, b: TrustBundle, current: ServerConfig | undefined, given: ReadonlyMap<string, string>, passGiven: readonly string[]): ServerConfig {
  const { envNames, ...rest } = b.servers[id] as TrustBundle['servers'][string];
  // Passing a variable of this machine's environment is the operator's decision, as a value is: a name this
  // machine's entry does not pass already must be given with --pass-env.
  const unagreed = rest.passEnv.find((n) => !(current?.passEnv ?? []).includes(n) && !passGiven.includes(n));
  if (unagreed !== undefined) throw new WardenError('BUNDLE_ENV_MISSING', `server '${id}' of the trust bundle would be passed ${unagreed} from this machine's environment, which its entry here does not pass; nothing was changed. If it should, agree with: --pass-env ${id}.${unagreed}`);
  const env: Record<string, string> = {};
  for (const name of envNames) {
    const value = given.has(name) ? given.get(name) : current && Object.hasOwn(current.env, name) ? current.env[name] : undefined;
    if (value === undefined) throw new WardenError('BUNDLE_ENV_MISSING', `server '${id}' of the trust bundle needs a value for ${name}, which a bundle never carries, and this machine has none in its servers.json; nothing was changed. Give it with: --env ${id}.${name}=VALUE`);
    env[name] = value;
  }
  return { ...rest, env };
}

/**
 * A server this machine configured itself is replaced by a bundle only when the operator hands it over (--adopt ID,
 * fleet.adopt): otherwise a signer could take over, and a later bundle that leaves the id out would delete, a
 * server the machine's operator set up. A server is the fleet's only while its entry is the one the last apply
 * wrote (retire.ts fleetServers); a home whose bundle-state predates that record has none of the fleet's.
 */
function checkOwnership(b: TrustBundle, servers: ServersFile, fleet: readonly string[], adopt: ReadonlySet<string>, file: string): string[] {
  const own = Object.keys(b.servers).filter((id) => Object.hasOwn(servers.servers, id) && !fleet.includes(id));
  const refused = own.filter((id) => !adopt.has(id));
  if (refused.length > 0) throw new WardenError('BUNDLE_SERVER_CONFLICT', `the trust bundle ${file} names ${refused.map((id) => `'${id}'`).join(', ')}, which this machine configured itself (no bundle applied here brought ${refused.length > 1 ? 'them' : 'it'}); nothing was changed. To hand ${refused.length > 1 ? 'them' : 'it'} over to the fleet (replaced by the bundle's entry now, removed when a later bundle leaves ${refused.length > 1 ? 'them' : 'it'} out): ${refused.map((id) => `--adopt ${id}`).join(' ')} (the daemon: "adopt" in the fleet section). Or rename this machine's server.`);
  return own;
}

/** An --env or --pass-env for a server or a name the bundle does not carry is a typo, not a value to drop. */
function checkGiven(b: TrustBundle, opts: ApplyOptions): void {
  for (const id of opts.adopt ?? []) {
    if (!Object.hasOwn(b.servers, id)) throw new WardenError('USAGE', `--adopt ${id}: the trust bundle has no server '${id}' (it has ${Object.keys(b.servers).sort().join(', ')}); nothing was changed.`);
  }
  const given = [...[...opts.env].flatMap(([id, m]) => [...m.keys()].map((n) => ['--env', id, n, 'envNames'] as const)), ...[...opts.passEnv].flatMap(([id, ns]) => ns.map((n) => ['--pass-env', id, n, 'passEnv'] as const))];
  for (const [flag, id, name, field] of given) {
    const server = Object.hasOwn(b.servers, id) ? b.servers[id] : undefined;
    if (!server) throw new WardenError('USAGE', `${flag} ${id}.${name}: the trust bundle has no server '${id}' (it has ${Object.keys(b.servers).sort().join(', ')}); nothing was changed.`);
    if (!(server[field] as readonly string[]).includes(name)) throw new WardenError('USAGE', `${flag} ${id}.${name}: server '${id}' of the trust bundle has no ${field === 'envNames' ? 'env' : 'passEnv'} name ${name}; nothing was changed.`);
  }
}

async function applyVerified(paths: HomePaths, file: string, v: Verified, opts: ApplyOptions): Promise<Applied> {
  const b = v.bundle;
  checkGiven(b, opts);
  const state = loadBundleState(paths);
  checkSerial(state, b.serial, opts.allowRollback, file, paths.bundleState, v.pinned);
  // Env values and ownership are checked before anything is installed; again, inside the locks, when written.
  const current = loadServers(paths);
  checkOwnership(b, current, fleetServers(state, current), opts.adopt ?? new Set(), file);
  for (const id of Object.keys(b.servers)) serverConfig(id, b, Object.hasOwn(current.servers, id) ? current.servers[id] : undefined, opts.env.get(id) ?? new Map(), opts.passEnv.get(id) ?? []);
  checkUnsignedAgreed(b, opts.allowUnsigned ?? []);
  if (Object.keys(b.packages).length === 0) return replaceTrustFiles(paths, file, v, b, opts, new Map());
  // Servers installed into the store: their packages first, through install's path (store-packages.ts).
  return withStorePackages(paths, b, opts.by ?? 'bundle apply', async (local, installed) => ({ ...(await replaceTrustFiles(paths, file, v, local, opts, treeProvenance(installed))), packages: installed.map((i) => ({ entry: i.entry, package: `${i.c.name}@${i.c.version}`, servers: i.servers, created: i.store.created })) }));
}

/** Checks every artifact and launch of `b` (its paths this machine's), then replaces the trust files in one step. */
async function replaceTrustFiles(paths: HomePaths, file: string, v: Verified, b: TrustBundle, opts: ApplyOptions, provenanceOf: ReadonlyMap<string, unknown>): Promise<Applied> {
  const cache = new DigestCache();
  const reproduced: Reproduced[] = await reproduceArtifacts(b.artifacts, loadAllowlist(paths), paths.allowlist, cache);
  const before = loadServers(paths);
  const unnamed = unnamedServers(b, before, fleetServers(loadBundleState(paths), before));
  const runBy = await pathsRunBy(unnamed, before, loadLocks(paths), cache);
  await checkLaunches(b, before.path, reproduced, cache, runBy);
  checkShared(reproduced, loadAllowlist(paths), runBy, file);
  const digestOf = new Map(reproduced.map((r) => [`${r.artifact.kind} ${r.artifact.path}`, r.sha256]));

  return withFileLocks([paths.servers, paths.allowlist, paths.toolsLock, paths.wardenLock, paths.bundleState], 'servers.json, allowlist.json, the locks and bundle-state.json', async (stillHeld) => {
    const state = loadBundleState(paths);
    const rollback = checkSerial(state, b.serial, opts.allowRollback, file, paths.bundleState, v.pinned);
    const signerChanged = state.applied?.pinned !== undefined && state.applied.pinned !== v.pinned;
    const servers = loadServers(paths);
    const previous = fleetServers(state, servers); // before the bundle's entries replace theirs
    const adopted = checkOwnership(b, servers, previous, opts.adopt ?? new Set(), file);
    const ids = Object.keys(b.servers).sort();
    for (const id of ids) {
      const current = Object.hasOwn(servers.servers, id) ? servers.servers[id] : undefined;
      servers.servers[id] = serverConfig(id, b, current, opts.env.get(id) ?? new Map(), opts.passEnv.get(id) ?? []);
    }
    const allowlist = loadAllowlist(paths);
    const locks = loadLocks(paths);
    // Again under the locks, on the files as they are now: the paths the servers the bundle does not name run.
    checkShared(reproduced, allowlist, await pathsRunBy(unnamedServers(b, servers, previous), servers, locks, cache), file);
    const added: AllowlistEntry[] = [];
    const replaced: AllowlistEntry[] = [];
    for (const { artifact: a, sha256 } of reproduced) {
      if (!('accept' in a)) {
        const own = allowlist.entries.find((e) => e.path === a.path && e.kind === a.kind);
        if (own?.sha256 !== sha256) throw new WardenError('BUNDLE_MACHINE_LOCAL_UNTRUSTED', `${paths.allowlist} changed while the bundle was being checked: its entry for ${a.path} is no longer the digest seen; nothing was changed. Run the command again.`);
        continue;
      }
      const provenance = a.kind === 'package' ? provenanceOf.get(a.path) : undefined;
      const entry: AllowlistEntry = { path: a.path, kind: a.kind, sha256, addedAt: opts.now.toISOString(), note: `trust bundle serial ${b.serial}`, ...(provenance ? { provenance } : {}) };
      const change = upsertEntry(allowlist, entry);
      if (change.action === 'add') added.push(entry);
      if (change.action === 'replace') replaced.push(entry);
    }
    const usedBefore = artifactsOf(locks, [...previous, ...ids]);
    for (const id of ids) {
      locks.tools.set(id, b.tools.get(id) as NonNullable<ReturnType<typeof b.tools.get>>);
      const extra = b.warden.get(id) as NonNullable<ReturnType<typeof b.warden.get>>;
      // A machine-local artifact (the interpreter) is recorded with the digest it has here.
      locks.warden.set(id, { ...extra, artifacts: extra.artifacts.map((a) => ({ ...a, sha256: digestOf.get(`${a.kind} ${a.path}`) ?? a.sha256 })) });
    }
    const retired = retireWithdrawn(previous, ids, usedBefore, servers, locks, allowlist);
    const previousSerial = state.applied?.serial;
    state.floors = floorsAfter(state, v.pinned, b.serial);
    state.applied = { serial: b.serial, sha256: v.sha256, at: opts.now.toISOString(), servers: ids, pinned: v.pinned, entries: Object.fromEntries(ids.map((id) => [id, entryDigest(servers.servers[id] as ServerConfig)])) };

    stillHeld();
    await commitFiles([...trustFileWrites(paths, { servers, allowlist, locks }), { file: paths.bundleState, data: renderBundleState(state) }], `the trust bundle with serial ${b.serial}`);
    return { serial: b.serial, servers: ids, ...(previousSerial !== undefined ? { previousSerial } : {}), rollback, ...(signerChanged ? { signerChanged } : {}), signer: v.signer, added, replaced, retired, adopted, endedSessions: [] };
  });
}

/** Verifies and applies a trust bundle; every outcome is audited (bundle_applied, bundle_rejected). */
export async function applyBundle(paths: HomePaths, file: string, policy: SignerPolicy, opts: ApplyOptions): Promise<Applied> {
  let serial: number | undefined;
  const record = opts.record ?? ((e: BundleEvent) => appendAudit(paths.audit, e));
  const by = opts.by ?? 'bundle apply';
  try {
    const verified = verifyBundleFile(file, policy);
    serial = verified.bundle.serial;
    const applied = await applyVerified(paths, file, verified, opts);
    // A withdrawn server must not keep running where it runs now: its sessions are asked to end (after the
    // commit, so a new `run` of it is already refused).
    applied.endedSessions = endSessionsOf(paths.runDir, new Set(applied.retired.servers)).map((s) => ({ server: s.serverId, pid: s.supervisorPid }));
    await record({ event: 'bundle_applied', serial: applied.serial, sha256: verified.sha256, servers: applied.servers, ...(applied.retired.servers.length > 0 ? { removed: applied.retired.servers } : {}), ...(applied.endedSessions.length > 0 ? { endedSessions: applied.endedSessions } : {}), ...(applied.adopted.length > 0 ? { adopted: applied.adopted } : {}), ...(applied.previousSerial !== undefined ? { previousSerial: applied.previousSerial } : {}), rollback: applied.rollback, ...(applied.signerChanged ? { signerChanged: true } : {}), signer: applied.signer, by });
    return applied;
  } catch (err) {
    if (err instanceof WardenError) {
      // The refusal is what the operator must see; a failure to record it must not hide it.
      await record({ event: 'bundle_rejected', reason: err.code, ...(serial !== undefined ? { serial } : {}), file, by }).catch(() => undefined);
    }
    throw err;
  }
}
