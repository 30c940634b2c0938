import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveHome } from '../../src/store/paths.js';
import { loadReview, saveReview, type Review } from '../../src/store/review.js';
import { tempDir } from '../helpers/warden.js';

// Review 14 finding 4: what `diff` showed (cache/review.ID.json) is read back with every tool it names, a tool named
// like an Object.prototype member included (valibot's record drops `constructor` and `__proto__`: such a tool could
// never be pinned), into a record with no prototype (a name the review lacks is absent, never an inherited value).

let dir: string | undefined;
afterEach(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

const D = (c: string): string => `sha256:${c.repeat(64)}`;

describe('the review cache', () => {
  it('keeps tools named constructor, __proto__ and prototype, and inherits nothing', () => {
    dir = tempDir();
    const paths = resolveHome(dir);
    const tools = Object.create(null) as Record<string, string>;
    for (const [name, c] of [['constructor', 'a'], ['__proto__', 'b'], ['prototype', 'c'], ['echo', 'd']] as const) tools[name] = D(c);
    const review: Review = { lockedSurfaceHash: D('0'), at: '2026-12-07T19:00:00Z', surface: D('1'), tools, handshakes: [D('2')], catalogs: D('3'), conditional: [] };
    saveReview(paths, 'srv', review);
    const loaded = loadReview(paths, 'srv');
    expect(Object.keys(loaded?.tools ?? {}).sort()).toEqual(['__proto__', 'constructor', 'echo', 'prototype']);
    expect(Object.getPrototypeOf(loaded?.tools)).toBeNull();
    expect([loaded?.tools.constructor, loaded?.tools.__proto__, loaded?.tools.hasOwnProperty]).toEqual([D('a'), D('b'), undefined]);
  });
});
