import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { WardenError } from '../../src/error.js';

// A name given twice in any object of a client file, at any depth, is refused (issue 26, class 3): JSON.parse
// (the client) keeps the last copy, the rewrite edits the first. Generated: a client file with one entry whose
// value is an arbitrary JSON tree; one object of it (or the entry, or "mcpServers", or the top level) gets one
// of its own names again, at a random place among its members.

const FILE = '/home/u/.config/Claude/claude_desktop_config.json';
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const key = fc.oneof(fc.constantFrom('command', 'args', 'env', 'HTTPS_PROXY', '__proto__', 'a', 'A', ''), fc.string({ maxLength: 6 }));
const { tree } = fc.letrec<{ tree: Json }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 5 }), fc.array(tie('tree'), { maxLength: 3 }), fc.dictionary(key, tie('tree'), { maxKeys: 3 })),
}));

const objects = (x: Json): number => (x === null || typeof x !== 'object' ? 0 : (Array.isArray(x) ? 0 : 1) + Object.values(x).reduce<number>((n, v) => n + objects(v), 0));

/** JSON text of `v`, the `target`-th object met (in document order) given its `pick`-th member again at `at`
 *  (an empty object gets none: `inserted` says). */
function withDuplicate(v: Json, target: number, pick: number, at: number): { text: string; inserted: boolean } {
  let seen = 0;
  let inserted = false;
  const write = (x: Json): string => {
    if (x === null || typeof x !== 'object') return JSON.stringify(x);
    if (Array.isArray(x)) return `[${x.map(write).join(',')}]`;
    const members = Object.entries(x).map(([k, val]) => `${JSON.stringify(k)}:${write(val)}`);
    if (seen++ === target && members.length > 0) {
      const copy = `${JSON.stringify(Object.keys(x)[pick % members.length])}:${write(null)}`;
      members.splice(at % (members.length + 1), 0, copy);
      inserted = true;
    }
    return `{${members.join(',')}}`;
  };
  return { text: write(v), inserted };
}

describe('a name given twice at any depth of a client file', () => {
  it('is always refused with CLIENT_CONFIG_INVALID, and the same file without it is read', () => {
    fc.assert(
      fc.property(tree, fc.nat(), fc.nat(), fc.nat(), (entry, target, pick, at) => {
        const file: Json = { theme: 'dark', mcpServers: { notes: { command: '/usr/bin/node', args: ['s.js'], extra: entry } } };
        const { text, inserted } = withDuplicate(file, target % objects(file), pick, at);
        if (!inserted) {
          expect(parseClientConfig(FILE, text).entries.map((e) => e.name)).toEqual(['notes']);
          return;
        }
        let error: unknown;
        try {
          parseClientConfig(FILE, text);
        } catch (err) {
          error = err;
        }
        expect(error).toBeInstanceOf(WardenError);
        expect((error as WardenError).code).toBe('CLIENT_CONFIG_INVALID');
        expect((error as WardenError).message).toMatch(/appears twice in .*Nothing was changed\.$/);
      }),
      { numRuns: 300 },
    );
  });

  it('names differing only in case, or in normalization, are different names (JSON and the kernel compare them exactly)', () => {
    const text = JSON.stringify({ mcpServers: { notes: { command: '/bin/true', env: { Path: 'a', PATH: 'b', 'e\u0301': '1', '\u00e9': '2' } } } });
    expect(parseClientConfig(FILE, text).entries[0]?.value).toMatchObject({ env: { Path: 'a', PATH: 'b' } });
  });
});

describe('nesting', () => {
  it('256 levels are read; one more is refused, counted by tokens (brackets inside strings and comments do not count)', () => {
    const nested = (n: number): string => `{"mcpServers": {}, "x": ${'['.repeat(n - 1)}${']'.repeat(n - 1)} /* [[[ */, "y": "[[[["}`;
    expect(parseClientConfig(FILE, nested(256)).entries).toEqual([]);
    expect(() => parseClientConfig(FILE, nested(257))).toThrow(/nests objects and arrays more than 256 deep/);
  });
});
