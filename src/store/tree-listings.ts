import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import type { TreeListing } from '../attest/tree.js';
import { listingMatches } from '../attest/tree-listing.js';
import { writeAtomic } from './atomic.js';
import type { HomePaths } from './paths.js';

// The listing a package tree's digest was computed from, kept when the tree is allowlisted
// (cache/trees/SHA256.json, docs/formats.md): what a refusal of the changed tree compares with to name the files
// added, removed or changed (attest/tree-listing.ts). It explains, it never admits: a listing is used only when
// its own digest is the tree digest it is filed under, so a forged or damaged one is no listing at all. A home
// enrolled before listings were kept has none, and the refusal says so.

const SHA256 = /^[0-9a-f]{64}$/;
/** Far above server-everything's (~0.6 MB); the tree walk's own bound is 200,000 files. */
const MAX_LISTING_BYTES = 128 << 20;

const listingSchema = v.strictObject({
  version: v.literal(1),
  sha256: v.pipe(v.string(), v.regex(SHA256)),
  packages: v.array(v.strictObject({ dir: v.string(), name: v.string(), version: v.string(), lines: v.array(v.string()) })),
  missing: v.array(v.string()),
});

function listingFile(paths: HomePaths, sha256: string): string {
  if (!SHA256.test(sha256)) throw new Error(`not a sha256: ${JSON.stringify(sha256)}`);
  return path.join(paths.cacheDir, 'trees', `${sha256}.json`);
}

/** Keeps the listing of an allowlisted tree; returns why it could not (the refusal will then name no files). */
export function saveTreeListing(paths: HomePaths, sha256: string, listing: TreeListing): string | undefined {
  const file = listingFile(paths, sha256);
  try {
    if (loadTreeListing(paths, sha256)) return undefined; // one that proves to be it is there already
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeAtomic(file, JSON.stringify({ version: 1, sha256, packages: listing.packages, missing: listing.missing }) + '\n');
    return undefined;
  } catch (err) {
    return `could not keep the file list of the package tree ${sha256} in ${file}: ${(err as Error).message}. A later refusal of that tree as changed will not name its files.`;
  }
}

/** The listing kept for tree digest `sha256`, or undefined when there is none that proves to be it. */
export function loadTreeListing(paths: HomePaths, sha256: string): TreeListing | undefined {
  let text: string;
  try {
    const file = listingFile(paths, sha256);
    if (fs.statSync(file).size > MAX_LISTING_BYTES) return undefined;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let parsed: v.InferOutput<typeof listingSchema>;
  try {
    parsed = v.parse(listingSchema, JSON.parse(text));
  } catch {
    return undefined;
  }
  const listing: TreeListing = { packages: parsed.packages, missing: parsed.missing };
  return parsed.sha256 === sha256 && listingMatches(listing, sha256) ? listing : undefined;
}
