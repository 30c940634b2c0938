import fs from 'node:fs';
import os from 'node:os';
import type { HomePaths } from '../store/paths.js';
import { loadServers } from '../store/servers.js';
import { DECOY_PATHS, decoysUnavailable } from './decoys.js';
import { startWriteTrace, TRACING_OFF, writesUnobservable } from './write-trace.js';
import { engineVersion, probeDomains, probeFiles, probeNetwork, probeUnprivileged, type Probe } from './doctor-probe.js';
import { findEngine, findNsenter, findTool, type Engine, type EngineLookup } from './engine.js';

// `mcp-warden doctor`: what each sandbox level confines on THIS host, from real probes (sandbox/doctor-probe.ts)
// and the same lookups a launch makes (sandbox/engine.ts): whether a launch of each level would start, or the
// stable code it would be refused with and the fix. Nothing is guessed from versions.

export type Level = 'none' | 'loopback' | 'domains' | 'any' | 'no sandbox';

export interface LevelReport {
  level: Level;
  confines: string;
  doesNot: string;
  /** Whether a launch with this level starts here. */
  ok: boolean;
  /** When not ok: the code a launch is refused with, and what to do. */
  code?: 'SANDBOX_ENGINE_MISSING' | 'SANDBOX_UNAVAILABLE';
  fix?: string;
}

type Found = { file: string } | { code: 'SANDBOX_ENGINE_MISSING' | 'SANDBOX_UNAVAILABLE'; message: string };

export interface DoctorReport {
  version: 1;
  uid: number;
  trustedPath: string;
  /** Where the trusted path came from: the home's servers.json, or the default (no servers.json yet). */
  pathFrom: 'servers.json' | 'default';
  engine: Found & { version?: string };
  nsenter: Found;
  /** The enrollment observation's helpers (sandbox/observe.ts), each its file on the trusted path or null. */
  observation: { unshare: string | null; sh: string | null; mount: string | null; umount: string | null; overlayfs: boolean };
  userNamespaces: { max: number | null; unprivilegedClone: number | null; apparmorRestricted: number | null };
  /** Whether `landlock` is in /sys/kernel/security/lsm (null: not readable). Information only: not used. */
  landlock: boolean | null;
  probes: { network: Probe | null; files: Probe | null; domains: Probe | null; unprivileged: Probe | null };
  /** Decoys at these paths of the user's home in every confined session (sandbox/decoys.ts), or why none are. */
  decoys: { placed: boolean; paths: string[]; why?: string };
  /** Whether confined sessions' denied writes are observed (sandbox/write-trace.ts): bpftrace found on the trusted
   *  path and started here once (attached, then stopped), or why not. */
  writes: { observed: boolean; bpftrace: string | null; off?: true; why?: string; guard?: true };
  levels: LevelReport[];
  ok: boolean;
}

const readSmall = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, 'utf8').slice(0, 65536);
  } catch {
    return undefined;
  }
};
const readInt = (file: string): number | null => {
  const n = Number.parseInt(readSmall(file) ?? '', 10);
  return Number.isSafeInteger(n) ? n : null;
};

function found(find: () => Engine): Found & { engine?: Engine } {
  try {
    const engine = find();
    return { file: engine.file, engine };
  } catch (err) {
    const e = err as { code?: string; message: string };
    return { code: e.code === 'SANDBOX_UNAVAILABLE' ? 'SANDBOX_UNAVAILABLE' : 'SANDBOX_ENGINE_MISSING', message: e.message.replace(/^server '<id>' declares [^,]*, but /, '') };
  }
}

const INSTALL = 'Install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) into a directory of the trusted path (servers.json "path"), or run a server without confinement on purpose: mcp-warden sandbox <id> --unconfined';
const FILES = "the file system read-only; the homes, the warden's home and /run hidden; writes only to its data directory, a private /tmp and its grants";

/** Denied writes: the host's conditions, then a real start of the tracer (a cgroup id no session has). */
async function writesReport(lookup: EngineLookup, off: boolean): Promise<DoctorReport['writes']> {
  const bpftrace = findTool('bpftrace', lookup);
  if (off) return { observed: false, bpftrace: bpftrace?.file ?? null, off: true, why: TRACING_OFF }; // nothing started
  const host = writesUnobservable(bpftrace);
  // Not traced: a node server's module guard reports what its own fs calls were refused (docs/adr/0068).
  if (host !== undefined || !bpftrace) return { observed: false, bpftrace: bpftrace?.file ?? null, why: host ?? 'bpftrace is not on the trusted path', guard: true };
  try {
    await (await startWriteTrace(bpftrace, 0n, () => {}, 1)).close();
    return { observed: true, bpftrace: bpftrace.file };
  } catch (err) {
    return { observed: false, bpftrace: bpftrace.file, guard: true, why: `bpftrace could not attach its probes (bpf refused, or tracepoints missing): ${(err as Error).message.slice(0, 512)}` };
  }
}

function decoyReport(home: string): DoctorReport['decoys'] {
  const why = decoysUnavailable(home, false);
  return { placed: why === undefined, paths: DECOY_PATHS.map((p) => `~/${p}`), ...(why !== undefined ? { why } : {}) };
}

export async function doctorReport(paths: HomePaths): Promise<DoctorReport> {
  const config = loadServers(paths);
  const pathFrom = fs.existsSync(paths.servers) ? 'servers.json' : 'default';
  const lookup: EngineLookup = { path: config.path, sandboxes: Object.fromEntries(Object.entries(config.servers).map(([id, s]) => [id, s.sandbox])) };
  const { engine, ...engineFound } = found(() => findEngine(lookup, '<id>'));
  const { engine: nsenter, ...nsenterFound } = found(() => findNsenter(lookup, '<id>'));
  const tool = (n: string): string | null => findTool(n, lookup)?.file ?? null;
  const version = engine ? engineVersion(engine) : undefined;
  const lsm = readSmall('/sys/kernel/security/lsm');
  const probes: DoctorReport['probes'] = {
    network: engine ? probeNetwork(engine) : null,
    files: engine ? probeFiles(engine, [os.homedir(), paths.home]) : null,
    domains: engine && nsenter ? await probeDomains(engine, nsenter) : null,
    unprivileged: engine ? (probeUnprivileged(engine) ?? null) : null,
  };
  const probeFix = (p: Probe | null, what: string): Pick<LevelReport, 'code' | 'fix'> | undefined =>
    p === null || p.ok ? undefined : { code: 'SANDBOX_UNAVAILABLE', fix: `the ${what} probe failed (${p.detail ?? 'no reason given'}): the kernel must allow bubblewrap's namespaces (for a warden that is not root: user namespaces, /proc/sys/user/max_user_namespaces above 0); or run a server without confinement on purpose: mcp-warden sandbox <id> --unconfined` };
  const engineFix: Pick<LevelReport, 'code' | 'fix'> | undefined = 'code' in engineFound ? { code: engineFound.code, fix: engineFound.code === 'SANDBOX_ENGINE_MISSING' ? `bubblewrap (bwrap) is not on the trusted path ${config.path}. ${INSTALL}` : engineFound.message } : undefined;
  const nsenterFix: Pick<LevelReport, 'code' | 'fix'> | undefined = 'code' in nsenterFound ? { code: nsenterFound.code, fix: `nsenter is not usable on the trusted path ${config.path}: install util-linux into a directory of it, or choose another network (mcp-warden sandbox <id> --network none)` } : undefined;
  const level = (l: Level, confines: string, doesNot: string, ...checks: (Pick<LevelReport, 'code' | 'fix'> | undefined)[]): LevelReport => {
    const bad = checks.find((c) => c !== undefined);
    return { level: l, confines, doesNot, ok: bad === undefined, ...(bad ?? {}) };
  };
  const files = probeFix(probes.files, 'file view');
  const net = probeFix(probes.network, 'network namespace');
  const levels = [
    level('none', `${FILES}; no network (a namespace of its own with only its loopback)`, 'system calls (no seccomp), CPU and memory; what it reads outside the hidden places (/etc, /usr, /opt)', engineFix, files, net),
    level('loopback', `${FILES}; only its own loopback: the host's local services and every outside address unreachable`, 'the same as none', engineFix, files, net),
    level('domains', `${FILES}; only the warden's proxy on its loopback, to the granted names resolving to public addresses`, "what it sends to a granted name; a client that ignores HTTPS_PROXY (node 20's fetch) gets no route out", engineFix, nsenterFix, files, net, probeFix(probes.domains, 'domains (nsenter)')),
    level('any', FILES, "the network: every address the host reaches, its local services and cloud metadata included", engineFix, files),
    level('no sandbox', 'nothing (attestation and the surface gate still apply)', 'every file and every address of the user running the warden'),
  ];
  return {
    version: 1,
    uid: process.getuid?.() ?? 0,
    trustedPath: config.path,
    pathFrom,
    engine: { ...engineFound, ...(version ? { version } : {}) },
    nsenter: nsenterFound,
    observation: { unshare: tool('unshare'), sh: tool('sh'), mount: tool('mount'), umount: tool('umount'), overlayfs: /\toverlay$/m.test(readSmall('/proc/filesystems') ?? '') },
    userNamespaces: { max: readInt('/proc/sys/user/max_user_namespaces'), unprivilegedClone: readInt('/proc/sys/kernel/unprivileged_userns_clone'), apparmorRestricted: readInt('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') },
    landlock: lsm === undefined ? null : lsm.trim().split(',').includes('landlock'),
    probes,
    decoys: decoyReport(paths.home),
    writes: await writesReport(lookup, config.writeTracing === 'off'),
    levels,
    ok: levels.every((l) => l.ok),
  };
}
