import { parentPort, workerData } from 'node:worker_threads';
import type { DigestCache } from '../attest/cache.js';
import type { TreeMemo } from '../attest/plan.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { attestServer, type AttestRound, type AttestRoundResult } from './attestation.js';

// One attestation round of the daemon, in a worker thread: digesting package trees allocates a great deal
// (a stat and a digest-cache lookup for each of thousands of files), and a heap grown by that would stay
// resident in the daemon for good. The worker's heap goes away with it (docs/adr/0010-watching-directories.md).

const round = workerData as AttestRound;
const trees: TreeMemo = new Map();
const results: AttestRoundResult['results'] = {};
let hits = 0;
let misses = 0;
let cacheError: string | undefined;
for (const id of round.ids) {
  const loaded: { cache?: DigestCache } = {};
  results[id] = await attestServer(round.good, id, () => (loaded.cache = loadDigestCache(round.paths, id)), trees);
  if (!loaded.cache) continue;
  cacheError ??= saveDigestCache(round.paths, id, loaded.cache);
  hits += loaded.cache.hits;
  misses += loaded.cache.misses;
}
parentPort?.postMessage({ results, hits, misses, ...(cacheError ? { cacheError } : {}) } satisfies AttestRoundResult);
