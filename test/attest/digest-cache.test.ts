import { describe, expect, it } from 'vitest';
import { DigestCache } from '../../src/attest/cache.js';
import type { StatKey } from '../../src/attest/stat-key.js';

// The digest cache's lookup: a hit only for the same inode's same (size, mtime_ns, ctime_ns) and an entry whose
// digest is 64 lowercase hex characters; anything else in a persisted entry is a miss (the file is digested).
const key: StatKey = { dev: '2049', ino: '77', size: '120', mtimeNs: '1700000000123456789', ctimeNs: '1700000000987654321' };
const sha = 'ab'.repeat(32);
const entry = (digest: string, k: StatKey = key) => ({ [`${k.dev}:${k.ino}`]: `${k.size}:${k.mtimeNs}:${k.ctimeNs}:${digest}` });

describe('DigestCache.get', () => {
  it('hits for the same inode and (size, mtime_ns, ctime_ns) with a 64-character lowercase hex digest', () => {
    const cache = new DigestCache(entry(sha));
    expect(cache.get(key)).toBe(sha);
    expect(cache.hits).toBe(1);
  });

  it('misses when any of size, mtime_ns or ctime_ns differs, or another inode is asked', () => {
    const cache = new DigestCache(entry(sha));
    for (const k of [{ ...key, size: '121' }, { ...key, mtimeNs: '1700000000123456788' }, { ...key, ctimeNs: '1700000000987654322' }, { ...key, ino: '78' }]) {
      expect(cache.get(k)).toBeUndefined();
    }
    expect(cache.misses).toBe(4);
  });

  it('misses for a persisted digest that is not 64 lowercase hex characters (upper case, a non-hex letter, too short or long)', () => {
    for (const bad of [sha.toUpperCase(), `${sha.slice(0, 63)}g`, `${sha.slice(0, 63)}:`, sha.slice(0, 63), `${sha}0`, `${sha.slice(0, 62)}\u00e9a`]) {
      const cache = new DigestCache(entry(bad));
      expect(cache.get(key)).toBeUndefined();
      expect(cache.hits).toBe(0);
    }
  });
});

describe('DigestCache.forget', () => {
  it('empties a saved cache (a session keeps none of its tree): every key misses and it serializes to {} and is not dirty', () => {
    const cache = new DigestCache(entry(sha));
    cache.set({ ...key, ino: '78' }, sha);
    cache.forget();
    expect(cache.get(key)).toBeUndefined();
    expect(cache.toJSON()).toEqual({});
    expect(cache.dirty).toBe(false);
  });
});
