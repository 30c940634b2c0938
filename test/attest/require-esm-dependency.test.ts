import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderCall } from '../attack13/loader-session.js';

// Issue 28, item 1: a server whose dependency ships require.mjs for require() (the shape of the npm package
// async-function, which @upstash/context7-mcp, @wonderwhy-er/desktop-commander and mcp-server-kubernetes load)
// is enrolled and runs under the module guard on every node release it is tested on. Where node loads a
// require()d ES module's imports past the guard (node 20), the warden turns require(esm) off, so node resolves
// the package to its CommonJS index.js; where the guard's hook runs in the loading thread (22.15+, 24), the ES
// module and its import are checked as they load (docs/adr/0049-require-esm-on-node-20.md).

const tmp = perTestDirs();

const DEP = 'test/servers/i28';

/** The server (src/server.mjs) with sync-dep installed as its dependency, both in its package tree. */
function layoutSyncDepUser(dir: string, writes: Record<string, string> = {}): string {
  return layoutServerPackage(dir, {
    name: 'sync-dep-user',
    server: 'i28/sync-dep-user.mjs',
    copies: {
      'node_modules/sync-dep/package.json': 'i28/sync-dep-package.json',
      'node_modules/sync-dep/index.js': 'i28/sync-dep-index.js',
      'node_modules/sync-dep/index.mjs': 'i28/sync-dep-index.mjs',
      'node_modules/sync-dep/require.mjs': 'i28/sync-dep-require.mjs',
    },
    writes: { 'package.json': JSON.stringify({ name: 'sync-dep-user', version: '1.0.0', type: 'module', dependencies: { 'sync-dep': '1.0.0' } }), ...writes },
  });
}

/** What require('sync-dep') loads on each node: node 20 runs with require(esm) off (no "module-sync"). */
const VIA: Record<string, string> = { 'node 22': 'require.mjs', 'node 24': 'require.mjs' };

describe.each(GUARD_NODES)(`a dependency that ships require.mjs for require() (${DEP}), on %s`, (label, node) => {
  it('is enrolled and runs: the server answers with what require() gave it, and the guard refuses nothing', async () => {
    const server = layoutSyncDepUser(tmp.dir);
    const r = await loaderCall(tmp.home, node, server, 'which', {});
    expect(r.stderr).not.toContain('module guard');
    expect(r.refused).toEqual([]);
    expect(r.answer).toContain(`loaded: sync-dep through ${VIA[label] ?? 'index.js'}`);
    expect(r.code).toBe(0);
  });
});
