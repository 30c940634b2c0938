import fc from 'fast-check';
import { parse, stringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { wrapTomlEntry } from '../../src/clientconfig/toml-rewrite.js';
import { scanToml } from '../../src/clientconfig/toml-scan.js';

// The scanner that says where each value of a TOML file is written (ADR 0070), against smol-toml on generated
// files: every pair it finds, its value's text read alone means what the whole file says is at its path; and it
// ends, without throwing, on any text at all. Comments (after values, on their own lines, holding brackets,
// quotes and '=') are put between the statements smol-toml writes.

const word = fc.string({ unit: fc.constantFrom('a', 'B', '_', '-', '1', ' ', '"', "'", '\\', '#', '[', ']', '=', '.', '{', '}', '\n', '\t', 'é', '\u0000'), maxLength: 8 });
const name = fc.oneof(fc.constantFrom('basic', 'my server', 'a.b', 'x"y'), word.filter((w) => w.length > 0));
const entry = fc.record(
  { command: word, args: fc.array(word, { maxLength: 4 }), env: fc.dictionary(fc.constantFrom('A', 'API_TOKEN', 'B-2'), word, { maxKeys: 3 }), enabled: fc.boolean(), startup_timeout_sec: fc.integer({ min: 0, max: 600 }) },
  { requiredKeys: ['command'] },
);
const doc = fc.record({ model: word, mcp_servers: fc.dictionary(name, entry, { minKeys: 1, maxKeys: 3 }) });
const comment = fc.constantFrom('', ' # a comment [mcp_servers.x] = "', '\n# own line ] } """', '\n\n');

function at(v: unknown, path: string[]): unknown {
  return path.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], v);
}

describe('toml-scan', () => {
  it("each value it finds means, read alone, what smol-toml reads at that pair's path, and each entry's rewrite is proved", () => {
    fc.assert(
      fc.property(doc, fc.array(comment, { minLength: 64, maxLength: 64 }), (d, comments) => {
        // A comment after each line that ends a statement (never inside a multi-line value: smol-toml writes none).
        let n = 0;
        const text = stringify(d)
          .split('\n')
          .map((l) => (l.trim() === '' ? l : l + (comments[n++ % comments.length] ?? '')))
          .join('\n');
        const meant = parse(text);
        const stmts = scanToml(text);
        expect(stmts).toBeDefined();
        const pairs = (stmts ?? []).filter((s) => s.kind === 'pair');
        expect(pairs.length).toBeGreaterThan(0);
        for (const s of pairs) expect(parse(`v = ${text.slice(s.valueStart, s.valueEnd)}`).v).toEqual(at(meant, s.path));
        for (const [server, e] of Object.entries(d.mcp_servers)) expect(pairs.some((s) => s.path.join('\u0000') === ['mcp_servers', server, 'command'].join('\u0000'))).toBe(e.command !== undefined);
        // And the rewrite of each entry, a table of its own here, passes its proof.
        for (const e of parseClientConfig('/h/.codex/config.toml', text).entries) {
          const r = wrapTomlEntry(text, e, '/usr/bin/node', ['/w/main.js', '--home', '/h', 'run', 'x'], []);
          expect('reason' in r ? r.reason : '').toBe('');
        }
      }),
      { numRuns: 100 },
    );
  });

  it('ends without throwing on any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('[', ']', '"', "'", '=', '#', '\n', 'a', '.', '{', '}', ' ', '\\'), maxLength: 60 }), (text) => {
        const out = scanToml(text);
        expect(out === undefined || Array.isArray(out)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
