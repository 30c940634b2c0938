// A real-world server layout (pnpm: packages in node_modules/.pnpm/NAME@VERSION/node_modules/NAME, reached
// through symlinks node_modules/NAME): its `probe` tool loads them and reports what node made of them:
//   cjs     require('dep'): its __filename, the require.cache key, whether the cached module is the one loaded
//           and whether `other`'s require('dep') (its own pnpm symlink) is the same module instance
//   esm     import('dep-esm'): its import.meta.url
//   addon   require('addon'): a native addon (napi_register_module_v1 only) in the pnpm layout, its module filename
//   direct  process.dlopen of the addon through its symlinked path (as node-gyp-build / bindings-style code may)
import { createRequire } from 'node:module';
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

const require = createRequire(import.meta.url);

async function probe() {
  const out = {};
  const resolved = require.resolve('dep');
  const dep = require('dep');
  out.cjs = { resolved, filename: dep.filename, dirname: dep.dirname, cached: require.cache[resolved]?.filename ?? null, sameModule: require.cache[resolved]?.exports === dep, peer: dep.peer(), oneInstance: require('other').dep === dep };
  out.esm = { url: (await import('dep-esm')).url };
  const addonPath = require.resolve('addon');
  require('addon');
  out.addon = { resolved: addonPath, cached: require.cache[addonPath]?.filename ?? null };
  const m = { exports: {} };
  process.dlopen(m, addonPath);
  out.direct = 'ok';
  return out;
}

serve({
  initialize: (p) => initializeResult(p, 'layout17'),
  'tools/list': () => ({ tools: [{ name: 'probe', description: 'Loads its dependencies', inputSchema: { type: 'object' } }] }),
  'tools/call': async () => {
    try {
      return textResult(JSON.stringify(await probe()));
    } catch (e) {
      return { isError: true, content: [{ type: 'text', text: `failed: ${e.message}` }] };
    }
  },
});
