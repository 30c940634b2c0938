import fs from 'node:fs';
import { SHIPPED_TRUST_ROOT } from '../provenance/shipped-root.js';
import { openTrustRoot, trustRootDataSchema, type TrustRoot, type TrustRootData } from '../provenance/trust-root.js';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';

// The sigstore trust root in use: <home>/trust-root.json once `trust-root update` wrote one (a trust file like
// servers.json: owner-only, refused when another user could write it), else the one shipped with mcp-warden.

export const SHIPPED_ORIGIN = 'shipped with mcp-warden';

/** The home's trust root if there is one, else the shipped one. */
export function loadTrustRoot(paths: HomePaths): TrustRoot {
  const stored = loadJsonFile(paths.trustRoot, 'trust-root.json', trustRootDataSchema, true);
  return stored ? openTrustRoot(stored, paths.trustRoot) : openTrustRoot(SHIPPED_TRUST_ROOT, SHIPPED_ORIGIN);
}

/** Stores a trust root in the home (it is checked before anything is written). */
export function saveTrustRoot(paths: HomePaths, data: TrustRootData): TrustRoot {
  const root = openTrustRoot(data, paths.trustRoot);
  fs.mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  writeJsonAtomic(paths.trustRoot, data);
  return root;
}
