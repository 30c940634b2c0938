// A server that require()s, as it starts, a dependency of the shape of the npm package async-function (used by
// @upstash/context7-mcp, @wonderwhy-er/desktop-commander and mcp-server-kubernetes): its package.json "exports"
// maps "module-sync" (the condition node sets where require() can load ES modules) to require.mjs, an ES module
// importing the package's CommonJS index.js, and "default" to index.js itself (issue 28, item 1).
// With REQUIRE_AT_START set, it also require()s that file as it starts, and goes on without it when node throws.
//   which       what require('sync-dep') gave: through require.mjs or index.js; and the require at start
//   requireesm  require() of `file`, an ES module (what its imports reach is the test's); then awaits its
//               export `later` when it has one
import { createRequire } from 'node:module';
import { serveLoaders } from '../lib/rpc.mjs';

const require = createRequire(import.meta.url);
const dep = require('sync-dep');
let atStart = 'none';
if (process.env.REQUIRE_AT_START) {
  try {
    atStart = `gave ${require(process.env.REQUIRE_AT_START).description}`;
  } catch (e) {
    atStart = `threw ${e.code}`;
  }
}

serveLoaders('sync-dep-user', {
  which: () => `sync-dep through ${dep.via ?? 'index.js'}; require at start: ${atStart}`,
  requireesm: async (a) => {
    try {
      const m = require(a.file);
      if (m.later) await m.later();
      return `module ${m.description}`;
    } catch (e) {
      return `require returned (${e.code ?? e.message.slice(0, 80)})`;
    }
  },
});
