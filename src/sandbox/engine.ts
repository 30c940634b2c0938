import fs from 'node:fs';
import path from 'node:path';
import { statKey, type StatKey } from '../attest/stat-key.js';
import { WardenError } from '../error.js';

// The engine that applies a sandbox: bubblewrap (bwrap), run directly (docs/adr/0050-sandbox-engine.md). It is
// looked up on the trusted path of servers.json only, and must be a root- or warden-owned file nobody else
// can write: a bwrap another user could replace would decide what every confined server sees.

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
export function findEngine(trustedPath: string, id: string): Engine {
  const uid = process.getuid?.() ?? 0;
  for (const dir of trustedPath.split(':')) {
    const candidate = path.join(dir, 'bwrap');
    let real: string;
    try {
      real = fs.realpathSync(candidate);
    } catch {
      continue;
    }
    const st = fs.statSync(real, { bigint: true });
    if (!st.isFile()) continue;
    if ((st.uid !== 0n && st.uid !== BigInt(uid)) || (st.mode & 0o022n) !== 0n) {
      throw new WardenError('SANDBOX_UNAVAILABLE', `server '${id}' declares a sandbox, but its engine ${real} is owned by uid ${st.uid} or writable by others (mode ${(st.mode & 0o7777n).toString(8)}), so it cannot be trusted to confine it. Reinstall bubblewrap, or run: chown root ${real} && chmod go-w ${real}`);
    }
    if ((st.mode & 0o111n) === 0n) continue;
    return { file: real, key: statKey(st) };
  }
  throw new WardenError('SANDBOX_ENGINE_MISSING', `server '${id}' declares a sandbox, but bubblewrap (bwrap) is not on the trusted path ${trustedPath}, so the warden does not launch it unconfined. ${installHint(id)}`);
}
