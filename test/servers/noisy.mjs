// Hostile: writes log noise to stdout before every response, and on tools/call "flood" a line larger than
// the given number of bytes.
import { initializeResult, serve, textResult } from './lib/rpc.mjs';

const noise = () => process.stdout.write('[info] server says hello on stdout\n');
serve({
  initialize: (p) => (noise(), initializeResult(p, 'noisy')),
  'tools/list': () => (noise(), { tools: [{ name: 'flood', inputSchema: { type: 'object' } }] }),
  'tools/call': (p) => {
    if (p.name === 'flood') {
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(p.arguments.bytes) } }) + '\n');
      return new Promise(() => {});
    }
    noise();
    return textResult('ok');
  },
});
