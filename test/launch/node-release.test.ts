import { describe, expect, it } from 'vitest';
import { loadsRequiredEsmUnguarded, parseRelease } from '../../src/launch/node-release.js';

// Which node releases start with require(esm) off (docs/adr/0049-require-esm-on-node-20.md): those that have it
// (on, or behind --experimental-require-module, which exists from 20.17 and 22.0) and run the module guard's ES
// check on a loader-hooks thread of its own (no module.registerHooks before 22.15 and 23.5).

describe('node releases that start with require(esm) off', () => {
  it('are 20.17 and later 20s, 22.0 to 22.14 and 23.0 to 23.4; not 20.16, 21, 22.15, 23.5, 24 or 25', () => {
    const off = (v: string): boolean => loadsRequiredEsmUnguarded(parseRelease(v) as [number, number, number]);
    expect(['v20.17.0', 'v20.19.0', 'v20.20.2', 'v22.0.0', 'v22.12.0', 'v22.14.9', 'v23.0.0', 'v23.4.1'].filter(off)).toHaveLength(8);
    expect(['v20.16.0', 'v21.7.3', 'v22.15.0', 'v22.23.5', 'v23.5.0', 'v24.0.0', 'v24.22.3', 'v25.1.0'].filter(off)).toEqual([]);
  });

  it('read only an answer of the form vX.Y.Z', () => {
    expect(parseRelease('v24.22.3\n')).toEqual([24, 22, 3]);
    for (const answer of ['', '24.22.3', 'v24.22', 'v24.22.3-nightly', 'node v24.22.3', 'v24.22.3\nv20.20.2']) expect(parseRelease(answer)).toBeUndefined();
  });
});
