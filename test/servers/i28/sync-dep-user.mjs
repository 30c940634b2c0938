// A server that require()s, as it starts, a dependency of the shape of the npm package async-function (used by
// @upstash/context7-mcp, @wonderwhy-er/desktop-commander and mcp-server-kubernetes): its package.json "exports"
// maps "module-sync" (the condition node sets where require() can load ES modules) to require.mjs, an ES module
// importing the package's CommonJS index.js, and "default" to index.js itself (issue 28, item 1).
//   which       what require('sync-dep') gave: through require.mjs or index.js
//   requireesm  require() of `file`, an ES module (what its imports reach is the test's)
import { createRequire } from 'node:module';
import { serveLoaders } from '../lib/rpc.mjs';

const require = createRequire(import.meta.url);
const dep = require('sync-dep');

serveLoaders('sync-dep-user', {
  which: () => `sync-dep through ${dep.via ?? 'index.js'}`,
  requireesm: (a) => {
    try {
      return `module ${require(a.file).description}`;
    } catch (e) {
      return `require returned (${e.code ?? e.message.slice(0, 80)})`;
    }
  },
});
