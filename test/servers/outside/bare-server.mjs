// A legitimate bare script, in no package: it loads its sibling modules (./sibling.mjs and ./rpc.mjs when a
// test lays it out next to them).
import { description } from './sibling.mjs';
import { initializeResult, serve, textResult } from './rpc.mjs';

serve({
  initialize: (p) => initializeResult(p, 'bare'),
  'tools/list': () => ({ tools: [{ name: 'echo', description, inputSchema: { type: 'object' } }] }),
  'tools/call': (p) => textResult(`Echo: ${p.arguments?.message ?? ''}`),
});
