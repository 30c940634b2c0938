import { parentPort, workerData } from 'node:worker_threads';
import type { TreeMemo } from '../attest/plan.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { attestServer, type AttestRound, type AttestRoundResult } from './attestation.js';

// One attestation round of the daemon, in a worker thread: digesting package trees allocates a great deal
// (a stat and a digest-cache lookup for each of thousands of files), and a heap grown by that would stay
// resident in the daemon for good. The worker's heap goes away with it (docs/adr/0010-watching-directories.md).

const round = workerData as AttestRound;
const cache = loadDigestCache(round.paths);
const trees: TreeMemo = new Map();
const results: AttestRoundResult['results'] = {};
for (const id of round.ids) results[id] = await attestServer(round.good, id, cache, trees);
const cacheError = saveDigestCache(round.paths, cache);
parentPort?.postMessage({ results, hits: cache.hits, misses: cache.misses, ...(cacheError ? { cacheError } : {}) } satisfies AttestRoundResult);
