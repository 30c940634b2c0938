import fs from 'node:fs';
import path from 'node:path';

// The JSON files tests read from a home or a bundle and edit as an operator or an attacker would, typed by the
// members the tests name; every other member is kept, as `unknown`. Not the warden's own types (src/), which say
// what it accepts: a test also writes what the warden must refuse.

/** The JSON document in `file`, as the type the caller names. */
export const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** The members a test does not name. */
interface Rest {
  [member: string]: unknown;
}

export interface PinnedIdentity {
  issuer: string;
  repository: string;
  workflow: string;
}

/** A server of servers.json, or of a bundle's `servers` (with store paths). */
export interface ServerJson extends Rest {
  command: string;
  args: string[];
  package?: { name: string; version: string; integrity: string; store: string };
  provenance?: string;
  identity?: PinnedIdentity;
  rules?: Rest & { tools?: Record<string, Rest> };
}

export interface ServersJson extends Rest {
  servers: Record<string, ServerJson>;
  alerts?: unknown[];
  path?: string;
}

export interface AllowlistJson extends Rest {
  entries: (Rest & { path: string; kind: string; sha256: string; note?: string; provenance?: Rest })[];
}

/** A server's entry of tools.lock (also of a bundle's `toolsLock`). */
export interface ToolsLockEntryJson extends Rest {
  tools: { name: string }[];
  args: string[];
}

/** A server's entry of warden.lock (also of a bundle's `wardenLock`). */
export interface WardenLockEntryJson extends Rest {
  artifacts: { path: string; kind: string; sha256: string }[];
  /** The pin of the server's rules. */
  h_rules?: string;
}

/** tools.lock or warden.lock. */
export interface LockJson<Entry> extends Rest {
  servers: Record<string, Entry>;
}

export interface BundleStateJson extends Rest {
  applied: Rest & { serial: number; servers?: string[]; pinned?: unknown };
}

/** A store entry's install.json. */
export interface InstallJson extends Rest {
  tree: { sha256: string; root: string };
  /** Who built it, or how it was admitted without provenance. */
  provenance: Rest & { identity?: PinnedIdentity };
  dependencies: { name: string; version: string }[];
}

/** An entry of a package-lock.json's `packages`. */
export interface LockfilePackageJson extends Rest {
  name?: string;
  version?: string;
  integrity?: string;
  resolved?: string;
  license?: string;
  dependencies?: Record<string, string>;
}

/** A package-lock.json (lockfileVersion 3), or a bundle package's `lockfile`. */
export interface PackageLockJson extends Rest {
  packages: Record<string, LockfilePackageJson>;
}

/** A trust bundle file (docs/formats.md "Trust bundles"). */
export interface BundleJson extends Rest {
  serial: number;
  servers: Record<string, ServerJson>;
  artifacts: (Rest & { path: string; kind: string; accept?: string[]; machineLocal?: true })[];
  packages: Record<string, Rest & { name: string; version: string; integrity: string; identity?: PinnedIdentity; unsigned?: string; lockfile: PackageLockJson }>;
  toolsLock: Record<string, ToolsLockEntryJson>;
  wardenLock: Record<string, WardenLockEntryJson>;
}

/** A home's JSON files by name. */
export interface HomeJson {
  'servers.json': ServersJson;
  'allowlist.json': AllowlistJson;
  'tools.lock': LockJson<ToolsLockEntryJson>;
  'warden.lock': LockJson<WardenLockEntryJson>;
  'bundle-state.json': BundleStateJson;
}

/** The file `file` of `home`. */
export const readHomeJson = <F extends keyof HomeJson>(home: string, file: F): HomeJson[F] => readJson<HomeJson[F]>(path.join(home, file));

/** `record[key]`, which the test's document must have (an Error naming the key when it has not). */
export function member<T>(record: Record<string, T>, key: string): T {
  const value = record[key];
  if (value === undefined) throw new Error(`no member ${JSON.stringify(key)} in ${JSON.stringify(Object.keys(record))}`);
  return value;
}
