// A well-behaved server with two tools: echo, and env, which reports whether a named variable reached it.
// It announces itself on stderr, as real servers do. With ENV_NAMES_FILE set, it writes the names of its
// environment variables there when it starts (for tests of what a launch inherits with no call made). The file
// appears whole (written beside it, then renamed): a test polling for it never reads it half written.
import fs from 'node:fs';
import { initializeResult, serve, textResult } from './lib/rpc.mjs';

if (process.env.ENV_NAMES_FILE) {
  const partial = `${process.env.ENV_NAMES_FILE}.${process.pid}`;
  fs.writeFileSync(partial, JSON.stringify(Object.keys(process.env).sort()));
  fs.renameSync(partial, process.env.ENV_NAMES_FILE);
}

process.stderr.write('basic: ready\n');
serve({
  initialize: (p) => initializeResult(p, 'basic'),
  'tools/list': () => ({
    tools: [
      { name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } },
      { name: 'env', description: 'Reports an environment variable', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } },
    ],
  }),
  'tools/call': (p) => {
    if (p.name === 'echo') return textResult(`Echo: ${p.arguments?.message ?? ''}`);
    if (p.name === 'env') return textResult(JSON.stringify({ [p.arguments.name]: process.env[p.arguments.name] ?? null, names: Object.keys(process.env).sort() }));
    return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${p.name}` }] };
  },
});
