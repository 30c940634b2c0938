import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { BundleEvent } from '../audit/bundle-events.js';
import { WardenError, errnoOf } from '../error.js';
import { applyBundle, verifyBundleFile } from '../fleet/apply.js';
import { readPublicKey, type SignerPolicy } from '../fleet/signature.js';
import type { FleetConfig } from '../store/fleet-config.js';
import type { HomePaths } from '../store/paths.js';
import { checkTrusted } from '../store/perms.js';
import { loadTrustRoot } from '../store/trust-root-file.js';

// One apply of a fetched trust bundle by the daemon, in a worker thread: applying digests every artifact the bundle
// names (package trees: thousands of files, synchronously), which must not stall the daemon's event loop (metrics,
// watchers, the watchdog), and whose heap should not stay resident in the daemon (as attestation-worker.ts).
// The checks and the write are applyBundle's, unchanged; its audit events are handed to the daemon, which records
// them with its alert sinks and metrics.

export interface FleetApplyJob {
  paths: HomePaths;
  /** The fetched bundle in the daemon's private scratch directory; its signature is FILE.sigstore.json. */
  file: string;
  fleet: FleetConfig;
  now: string;
}

export type FleetWorkerMessage =
  | { event: BundleEvent }
  | { done: { ok: true; serial: number; servers: string[]; unused: string[] } | { ok: false; code: string; message: string; recorded: boolean } };

const job = workerData as FleetApplyJob;
const post = (m: FleetWorkerMessage): void => parentPort?.postMessage(m);

/** The pinned signer of the fleet section, as `bundle apply --key/--identity --issuer` takes it. */
function policyOf(paths: HomePaths, fleet: FleetConfig): SignerPolicy {
  if (fleet.key === undefined) return { identity: fleet.identity as string, issuer: fleet.issuer as string, root: loadTrustRoot(paths) };
  // The pinned key is a trust anchor: a file someone else can write could be swapped for their key.
  checkTrusted(fleet.key, 'the fleet signing key (fleet.key in servers.json)', 'file');
  let pem: string;
  try {
    pem = fs.readFileSync(fleet.key, 'utf8');
  } catch (err) {
    throw new WardenError('FILE_UNREADABLE', `the fleet signing key ${fleet.key} (fleet.key in servers.json) cannot be read (${errnoOf(err) ?? String(err)}); no bundle can be verified. Check the path.`);
  }
  return { key: readPublicKey(pem, fleet.key), keyFile: fleet.key };
}

/** fleet.env and fleet.passEnv, reduced to what the bundle's servers carry: the bundle moves, the section stays,
 *  so a value for a server or name a newer bundle dropped is not a typo to refuse the bundle for (apply's own
 *  check is for a command line). What was left out is returned, for the daemon to say. */
function given(fleet: FleetConfig, servers: Record<string, { envNames: string[]; passEnv: string[] }>): { env: Map<string, Map<string, string>>; passEnv: Map<string, string[]>; unused: string[] } {
  const unused: string[] = [];
  const env = new Map<string, Map<string, string>>();
  for (const [id, values] of Object.entries(fleet.env)) {
    const s = Object.hasOwn(servers, id) ? servers[id] : undefined;
    const kept = new Map(Object.entries(values).filter(([n]) => s?.envNames.includes(n) ?? false));
    for (const n of Object.keys(values)) if (!kept.has(n)) unused.push(`fleet.env.${id}.${n}`);
    if (kept.size > 0) env.set(id, kept);
  }
  const passEnv = new Map<string, string[]>();
  for (const [id, names] of Object.entries(fleet.passEnv)) {
    const s = Object.hasOwn(servers, id) ? servers[id] : undefined;
    const kept = names.filter((n) => s?.passEnv.includes(n) ?? false);
    for (const n of names) if (!kept.includes(n)) unused.push(`fleet.passEnv.${id}.${n}`);
    if (kept.length > 0) passEnv.set(id, kept);
  }
  return { env, passEnv, unused };
}

async function main(): Promise<void> {
  let policy: SignerPolicy;
  try {
    policy = policyOf(job.paths, job.fleet);
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return post({ done: { ok: false, code: err.code, message: err.message, recorded: false } });
  }
  // Read once to know which servers and names the bundle carries; applyBundle verifies it again, from the start.
  let carried: ReturnType<typeof given> = { env: new Map(), passEnv: new Map(), unused: [] };
  try {
    carried = given(job.fleet, verifyBundleFile(job.file, policy).bundle.servers);
  } catch {
    // applyBundle refuses it below, with the same error, and records the refusal
  }
  try {
    const r = await applyBundle(job.paths, job.file, policy, { allowRollback: false, env: carried.env, passEnv: carried.passEnv, now: new Date(job.now), by: 'daemon fleet', record: async (e) => post({ event: e }) });
    post({ done: { ok: true, serial: r.serial, servers: r.servers, unused: carried.unused } });
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    post({ done: { ok: false, code: err.code, message: err.message, recorded: true } });
  }
}

await main();
