import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockfileError, parseToolsLock, renderToolsLock } from '../../src/surface/lockfile.js';

// Interop with the public surfacelock project: its golden lockfile (test/fixtures/surfaces/README.md) must
// parse, be self-consistent, carry the hashes pinned in its golden_test.go, and re-render byte for byte.

const golden = fs.readFileSync(path.join(import.meta.dirname, '../fixtures/surfaces/golden.tools.lock'));

/** The golden lock with its two tool entries (alpha, beta) in the opposite order, each entry byte for byte intact. */
function swapTools(s: string): string {
  const open = s.indexOf('"tools": [\n') + '"tools": [\n'.length;
  const close = s.indexOf('\n      ],\n      "transport"');
  const sep = '\n        },\n        {\n';
  const [first, second] = s.slice(open, close).split(sep) as [string, string];
  if (!first.includes('"name": "alpha"') || !second.includes('"name": "beta"')) throw new Error('golden fixture changed shape');
  const alpha = first + '\n        }';
  const beta = '        {\n' + second;
  return s.slice(0, open) + beta + ',\n' + alpha + s.slice(close);
}

describe('tools.lock v1 interop', () => {
  it('parses the golden lockfile and re-renders it byte for byte', () => {
    const lock = parseToolsLock(golden);
    expect(renderToolsLock(lock)).toBe(golden.toString('utf8'));
  });

  it('finds the hashes pinned by the reference implementation', () => {
    const entry = parseToolsLock(golden).get('golden');
    expect(entry?.surface_hash).toMatch(/^sha256:d0ec5f7d.*90ef$/);
    expect(entry?.h_instructions).toMatch(/^sha256:fa004631.*2834$/);
    expect(entry?.tools.map((t) => [t.name, t.h_tool.slice(0, 15)])).toEqual([
      ['alpha', 'sha256:aa52d14d'],
      ['beta', 'sha256:4dbd67e0'],
    ]);
  });

  it.each([
    ['an edited description', (s: string) => s.replace('Second tool.', 'Second tool!'), /h_tool .* stored content hashes to/],
    ['an unknown field', (s: string) => s.replace('"lockfile_version": 1,', '"lockfile_version": 1,\n  "x_warden": true,'), /unknown field "x_warden"/],
    ['lockfile_version 2', (s: string) => s.replace('"lockfile_version": 1', '"lockfile_version": 2'), /lockfile_version must be 1/],
    ['an edited surface hash', (s: string) => s.replace('d0ec5f7d', 'd0ec5f7e'), /surface_hash .* rolls up to/],
    // Both entries kept whole (so every h_tool still checks out), only their order swapped: the sort rule alone trips.
    ['unsorted tools', swapTools, /^\/servers\/golden\/tools is not sorted by name/],
    ['a duplicate key', (s: string) => s.replace('"transport": "http"', '"transport": "http",\n      "transport": "stdio"'), /duplicate key "transport"/],
  ])('refuses %s as a lockfile error', (_what, edit, message) => {
    expect(() => parseToolsLock(edit(golden.toString('utf8')))).toThrow(LockfileError);
    expect(() => parseToolsLock(edit(golden.toString('utf8')))).toThrow(message);
  });
});
