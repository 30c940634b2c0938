import fs from 'node:fs';
import { WardenError } from '../error.js';
import { DigestCache } from '../attest/cache.js';
import { digestFileAsync } from '../attest/digest.js';
import { planLaunch } from '../attest/plan.js';
import { digestPackageTree } from '../attest/tree.js';
import type { AllowlistFile } from '../store/allowlist.js';
import type { BundleArtifact, TrustBundle } from '../store/bundle/format.js';
import { quoted } from './unnamed-runs.js';

// Before a bundle changes anything, every artifact it names is digested on this machine: a pinned one must hash
// to one of the bundle's accepted digests, a machine-local one to what this machine's own allowlist holds.

export interface Reproduced {
  artifact: BundleArtifact;
  sha256: string;
}

async function digestAt(a: BundleArtifact, cache: DigestCache): Promise<string> {
  let real: string;
  try {
    real = fs.realpathSync(a.path);
  } catch {
    throw new WardenError('BUNDLE_DIGEST_MISMATCH', `the ${a.kind} ${a.path} the trust bundle names does not exist on this machine; nothing was changed. Install the same file there first.`);
  }
  if (real !== a.path) throw new WardenError('BUNDLE_DIGEST_MISMATCH', `the ${a.kind} ${a.path} the trust bundle names is a link to ${real} on this machine; the bundle binds the resolved path. Nothing was changed.`);
  return a.kind === 'package' ? digestPackageTree(a.path, cache).sha256 : (await digestFileAsync(a.path, cache)).sha256;
}

/** Digests every artifact; refuses at the first one that does not reproduce. */
export async function reproduceArtifacts(artifacts: readonly BundleArtifact[], allowlist: AllowlistFile, allowlistFile: string, cache: DigestCache = new DigestCache()): Promise<Reproduced[]> {
  const out: Reproduced[] = [];
  for (const a of artifacts) {
    const sha256 = await digestAt(a, cache);
    if ('accept' in a) {
      if (!a.accept.includes(sha256)) throw new WardenError('BUNDLE_DIGEST_MISMATCH', `the ${a.kind} ${a.path} hashes to sha256 ${sha256} on this machine, expected ${a.accept.length === 1 ? a.accept[0] : `one of ${a.accept.join(', ')}`} as the trust bundle says; nothing was changed. Install the same version the bundle was made from, or ask for a bundle that accepts this one.`);
    } else {
      const own = allowlist.entries.find((e) => e.path === a.path && e.kind === a.kind);
      if (!own || own.sha256 !== sha256) {
        throw new WardenError('BUNDLE_MACHINE_LOCAL_UNTRUSTED', `the trust bundle leaves the ${a.kind} ${a.path} to this machine's allowlist, and ${allowlistFile} ${own ? `holds sha256 ${own.sha256} for it, but it hashes to ${sha256} now` : 'has no entry for it'}; nothing was changed. Check the file and run: mcp-warden allowlist add ${a.path}`);
      }
    }
    out.push({ artifact: a, sha256 });
  }
  return out;
}

/**
 * Resolves each server's command as `run` will on this machine (its trusted PATH) and refuses when the launch
 * would run an artifact the bundle does not name, or one with another digest than the one just checked: what
 * the bundle pins must be what runs here, not only what exists at its paths. And the other way: each server's
 * warden.lock entry names exactly what its launch runs here, so every artifact of the bundle is one a server it
 * names runs (the bundle's artifacts are those its lock entries name: format.ts), and no other file of the
 * machine is trusted through it. `runBy`: the paths servers the bundle does not name run, for the refusal.
 */
export async function checkLaunches(b: TrustBundle, trustedPath: string, reproduced: readonly Reproduced[], cache: DigestCache, runBy: ReadonlyMap<string, string[]> = new Map()): Promise<void> {
  const checked = new Map(reproduced.map((r) => [`${r.artifact.kind} ${r.artifact.path}`, r.sha256]));
  for (const [id, s] of Object.entries(b.servers)) {
    const plan = await planLaunch({ serverId: id, command: s.command, args: s.args, cwd: s.cwd, trustedPath, ...(s.modules ? { modules: s.modules } : {}) }, cache);
    for (const a of plan.artifacts) {
      const expected = checked.get(`${a.kind} ${a.path}`);
      if (expected === undefined) throw new WardenError('BUNDLE_DIGEST_MISMATCH', `server '${id}' of the trust bundle would run the ${a.kind} ${a.path} on this machine (its command resolved through the trusted PATH ${trustedPath}), which the bundle does not name; nothing was changed. Make the command resolve to the same files as on the machine that made the bundle, or make the bundle there.`);
      if (expected !== a.sha256) throw new WardenError('BUNDLE_DIGEST_MISMATCH', `the ${a.kind} ${a.path} of server '${id}' changed while the bundle was being checked (sha256 ${a.sha256}, checked ${expected}); nothing was changed. Run the command again.`);
    }
    const runs = new Set(plan.artifacts.map((a) => `${a.kind} ${a.path}`));
    const extra = (b.warden.get(id)?.artifacts ?? []).find((a) => !runs.has(`${a.kind} ${a.path}`));
    if (extra) {
      const others = runBy.get(extra.path);
      throw new WardenError('BUNDLE_ARTIFACT_NOT_RUN', `the trust bundle carries the ${extra.kind} ${extra.path} in the warden.lock entry of server '${id}', whose command does not run it on this machine (resolved through the trusted PATH ${trustedPath}, it runs ${plan.artifacts.map((a) => a.path).join(', ')})${others ? `; here, ${quoted(others)}, which the bundle does not name, run${others.length > 1 ? '' : 's'} it` : ''}. A bundle is trusted only for what the servers it names run; nothing was changed. Ask for a bundle made where '${id}' runs the same files.`);
    }
  }
}
