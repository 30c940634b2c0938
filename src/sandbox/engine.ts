import fs from 'node:fs';
import path from 'node:path';
import { statKey, type StatKey } from '../attest/stat-key.js';
import { WardenError } from '../error.js';
import { writeGrantOver } from './grant-policy.js';
import type { Sandbox } from './schema.js';

// The engine that applies a sandbox: bubblewrap (bwrap), run directly (docs/adr/0050-sandbox-engine.md). It is
// looked up on the trusted path of servers.json only, and must be a root- or warden-owned file nobody else
// can write: a bwrap another user could replace would decide what every confined server sees. A confined server
// writes as the warden's uid, so a directory of that path a server may write is never searched: such a grant is
// refused when set and at the server's launch (sandbox/grant-policy.ts), but a server launched before the
// directory joined the path may have written a bwrap there already.

/** Where the engine is looked up: servers.json's trusted path, and every server's sandbox (their write grants). */
export interface EngineLookup {
  path: string;
  sandboxes: Record<string, Sandbox | undefined>;
  /** The server being launched: its own write grants over a directory of the path, or over the engine found,
   *  refuse its launch before bwrap runs (sandbox/plan.ts: the trusted path, the warden's own files), with their
   *  own reason, so they are not skipped for it. */
  self?: string;
}

export interface Engine {
  /** The realpath of bwrap. */
  file: string;
  /** Its stat key when found: the processes of the engine are told from a server's by it (their exe). */
  key: StatKey;
}

/** What a refusal tells the operator to do when the engine is missing. */
export function installHint(id: string): string {
  return `Install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) into a directory of the trusted path, or run this one server without confinement on purpose: mcp-warden sandbox ${id} --unconfined`;
}

/** Finds bwrap on `trustedPath`; refuses with SANDBOX_ENGINE_MISSING or SANDBOX_UNAVAILABLE. */
export function findEngine(lookup: EngineLookup, id: string): Engine {
  return findTrusted('bwrap', lookup, id) ?? missing(`server '${id}' declares a sandbox, but bubblewrap (bwrap) is not on the trusted path ${lookup.path}, so the warden does not launch it unconfined. ${installHint(id)}`);
}

/** Finds nsenter (util-linux), which starts the network proxy's listener inside a sandbox with domains
 *  (sandbox/egress.ts); the same refusals. */
export function findNsenter(lookup: EngineLookup, id: string): Engine {
  return findTrusted('nsenter', lookup, id) ?? missing(`server '${id}' declares network domains, but nsenter (util-linux) is not on the trusted path ${lookup.path}, so its proxy cannot be started and the warden does not launch it. Install util-linux into a directory of the trusted path, choose another network (mcp-warden sandbox ${id} --network none), or run this one server without confinement on purpose: mcp-warden sandbox ${id} --unconfined`);
}

/** `name` on the trusted path (a root- or warden-owned executable nobody else can write, in a directory no
 *  server may write), or undefined. */
export function findTool(name: string, lookup: EngineLookup): Engine | undefined {
  try {
    return findTrusted(name, lookup, '');
  } catch {
    return undefined;
  }
}

function missing(message: string): never {
  throw new WardenError('SANDBOX_ENGINE_MISSING', message);
}

/** What the first usable `name` on a trusted path is: a program to run, or one found that cannot be trusted. */
export type TrustedLookup = { file: string; key: StatKey } | { untrusted: string; uid: bigint; mode: bigint } | undefined;

/** `name` on `lookup.path`, looked up as the warden runs a program outside every sandbox (bwrap, nsenter, the
 *  fleet daemon's git): a directory a server's write grant reaches is skipped, and so is a candidate whose
 *  realpath one reaches (a link, on a directory no server may write, to a server's file); the first executable
 *  regular file left must be root- or warden-owned and writable by nobody else (else `untrusted`). */
export function trustedProgram(name: string, lookup: EngineLookup): TrustedLookup {
  const uid = process.getuid?.() ?? 0;
  const others = Object.fromEntries(Object.entries(lookup.sandboxes).filter(([other]) => other !== lookup.self));
  for (const dir of lookup.path.split(':')) {
    if (!path.isAbsolute(dir) || writeGrantOver(dir, others) !== undefined) continue; // what is there may be a server's
    const candidate = path.join(dir, name);
    let real: string;
    try {
      real = fs.realpathSync(candidate);
    } catch {
      continue;
    }
    if (writeGrantOver(real, others) !== undefined) continue; // a link to a server's file
    const st = fs.statSync(real, { bigint: true });
    if (!st.isFile()) continue;
    if ((st.uid !== 0n && st.uid !== BigInt(uid)) || (st.mode & 0o022n) !== 0n) return { untrusted: real, uid: st.uid, mode: st.mode };
    if ((st.mode & 0o111n) === 0n) continue;
    return { file: real, key: statKey(st) };
  }
  return undefined;
}

/** `name` on the trusted path: a root- or warden-owned executable nobody else can write, in a directory no server
 *  may write, or undefined. */
function findTrusted(name: string, lookup: EngineLookup, id: string): Engine | undefined {
  const found = trustedProgram(name, lookup);
  if (found !== undefined && 'untrusted' in found) {
    const { untrusted: real, uid, mode } = found;
    throw new WardenError('SANDBOX_UNAVAILABLE', `server '${id}' declares a sandbox, but its engine ${real} is owned by uid ${uid} or writable by others (mode ${(mode & 0o7777n).toString(8)}), so it cannot be trusted to confine it. Reinstall ${name === 'bwrap' ? 'bubblewrap' : 'util-linux'}, or run: chown root ${real} && chmod go-w ${real}`);
  }
  return found;
}
