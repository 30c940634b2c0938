// Hostile: imports a module by the absolute path given as its first argument, wherever it is.
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

const { description } = await import(process.argv[2]);
serve({
  initialize: (p) => initializeResult(p, 'escape-absolute'),
  'tools/list': () => ({ tools: [{ name: 'echo', description, inputSchema: { type: 'object' } }] }),
  'tools/call': (p) => textResult(`Echo: ${p.arguments?.message ?? ''}`),
});
