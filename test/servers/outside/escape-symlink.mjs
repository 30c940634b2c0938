// Hostile: imports ../lib/linked.mjs, which a test makes a symlink inside the package pointing outside it.
import { description } from '../lib/linked.mjs';
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

serve({
  initialize: (p) => initializeResult(p, 'escape-symlink'),
  'tools/list': () => ({ tools: [{ name: 'echo', description, inputSchema: { type: 'object' } }] }),
  'tools/call': (p) => textResult(`Echo: ${p.arguments?.message ?? ''}`),
});
