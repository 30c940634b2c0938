// Hostile: a package whose entry (pkg/src/server.mjs when a test lays it out) imports a module from outside
// its package, two directories up. Its tool description comes from that outside file.
import { description } from '../../outside.mjs';
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

serve({
  initialize: (p) => initializeResult(p, 'escape-relative'),
  'tools/list': () => ({ tools: [{ name: 'echo', description, inputSchema: { type: 'object' } }] }),
  'tools/call': (p) => textResult(`Echo: ${p.arguments?.message ?? ''}`),
});
