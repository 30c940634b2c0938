// Stands in for an MCP client that saves its own configuration file while `mcp-warden import` works on it: when
// it starts with CLIENT_CONFIG set (import's enrollment launch passes the entry's env), it rewrites that file
// as a client would, changing "theme" to "dark". Otherwise an ordinary server with one tool, echo.
import fs from 'node:fs';
import { initializeResult, serve, textResult } from './lib/rpc.mjs';

const file = process.env.CLIENT_CONFIG;
if (file) fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"theme": "light"', '"theme": "dark"'));

serve({
  initialize: (p) => initializeResult(p, 'client-saver'),
  'tools/list': () => ({ tools: [{ name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }] }),
  'tools/call': (p) => textResult(`Echo: ${p.arguments?.message ?? ''}`),
});
