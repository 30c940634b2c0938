import fs from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from './atomic.js';
import type { HomePaths } from './paths.js';

// The release of each node interpreter the warden read (from its bytes, launch/node-release.ts), by the sha256 of
// the executable (cache/node-releases.json, docs/formats.md): a release is a function of the binary, so an
// interpreter's file is read once, not at every launch (~0.2 s for a 100 MB binary). What it decides is only whether node
// starts with require(esm) off (docs/adr/0049): a wrong entry either leaves it on, and the module guard then
// refuses a require() of an ES module as before, or turns it off where node could have checked it.

const SHA256 = /^[0-9a-f]{64}$/;
const RELEASE = /^v\d{1,4}\.\d{1,4}\.\d{1,4}$/;
const MAX_BYTES = 64 * 1024;
const MAX_ENTRIES = 64;

function file(paths: HomePaths): string {
  return path.join(paths.cacheDir, 'node-releases.json');
}

function load(paths: HomePaths): Record<string, string> {
  try {
    const f = file(paths);
    if (fs.statSync(f).size > MAX_BYTES) return {};
    const parsed = JSON.parse(fs.readFileSync(f, 'utf8')) as { version?: unknown; releases?: unknown };
    if (parsed.version !== 1 || typeof parsed.releases !== 'object' || parsed.releases === null) return {};
    return Object.fromEntries(Object.entries(parsed.releases).filter(([k, v]) => SHA256.test(k) && typeof v === 'string' && RELEASE.test(v)));
  } catch {
    return {};
  }
}

/** The release recorded for the node executable with digest `sha256`, or undefined. */
export function recordedNodeRelease(paths: HomePaths, sha256: string): string | undefined {
  const releases = load(paths);
  return Object.hasOwn(releases, sha256) ? releases[sha256] : undefined;
}

/** Records a node executable's release; a cache, so a failure to write only costs the next launch a probe. */
export function recordNodeRelease(paths: HomePaths, sha256: string, release: string): void {
  if (!SHA256.test(sha256) || !RELEASE.test(release)) return;
  try {
    const releases = { ...load(paths), [sha256]: release };
    const kept = Object.entries(releases).slice(-MAX_ENTRIES);
    writeJsonAtomic(file(paths), { version: 1, releases: Object.fromEntries(kept) });
  } catch {
    // the next launch asks again
  }
}
