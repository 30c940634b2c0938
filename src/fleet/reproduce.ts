import fs from 'node:fs';
import { WardenError } from '../error.js';
import { DigestCache } from '../attest/cache.js';
import { digestFileAsync } from '../attest/digest.js';
import { digestPackageTree } from '../attest/tree.js';
import type { AllowlistFile } from '../store/allowlist.js';
import type { BundleArtifact } from '../store/bundle/format.js';

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
export async function reproduceArtifacts(artifacts: readonly BundleArtifact[], allowlist: AllowlistFile, allowlistFile: string): Promise<Reproduced[]> {
  const cache = new DigestCache();
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
