// Reaches OpenSSL's engine loading without importing node:crypto or node:tls at start-up, each tool by another
// way to the built-in (on node 22.15+ the guard checks engines only once one of those built-ins is loaded):
//   named     import { setEngine } from 'node:crypto' (a dynamic import: a named binding of the ES facade)
//   require   createRequire(...)('crypto').setEngine
//   builtin   process.getBuiltinModule('crypto').setEngine (node 22.3+)
//   https     node:https only: a request whose TLS context has privateKeyEngine `path` (https loads tls itself)
//   binding   process.binding('crypto').setEngine (node 20 and 22)
//   loaded    whether node:tls and node:crypto are loaded (process.moduleLoadList), before any of the above
import { createRequire } from 'node:module';
import { serveLoaders } from '../lib/rpc.mjs';

const attempt = (f) => {
  try {
    f();
  } catch (e) {
    return `returned (${e.code ?? e.message})`;
  }
  return 'returned';
};
const loaders = {
  named: async (a) => {
    const { setEngine } = await import('node:crypto');
    return attempt(() => setEngine(a.path));
  },
  require: (a) => attempt(() => createRequire(import.meta.url)('crypto').setEngine(a.path)),
  builtin: (a) => attempt(() => process.getBuiltinModule('crypto').setEngine(a.path)),
  https: async (a) => {
    const https = await import('node:https');
    return attempt(() => https.request({ host: '127.0.0.1', port: 9, privateKeyEngine: a.path, privateKeyIdentifier: 'key' }).on('error', () => {}).end());
  },
  binding: (a) => attempt(() => process.binding('crypto').setEngine(a.path, 0xffff)),
  loaded: () => JSON.stringify(['tls', 'crypto'].filter((m) => process.moduleLoadList.includes(`NativeModule ${m}`))),
};
serveLoaders('engine-paths', loaders, { description: (tool) => `Engine by ${tool}`, catchErrors: false });
