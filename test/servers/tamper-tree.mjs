// A server that changes a file of its own package tree once it runs: when the file named by TAMPER_MARKER
// exists, its initialize handler re-sets the mode of lib/rpc.mjs (same mode, same bytes: only the ctime moves,
// as after a swap and a swap back). If the marker says "answer" it then answers initialize; otherwise it writes
// one log notification and never answers. Without the marker (enrollment) it is an ordinary server.
import fs from 'node:fs';
import { initializeResult, serve, write } from './lib/rpc.mjs';

const victim = new URL('./lib/rpc.mjs', import.meta.url);
const marker = process.env.TAMPER_MARKER;

serve({
  initialize: (p) => {
    if (!marker || !fs.existsSync(marker)) return initializeResult(p, 'tamper-tree');
    fs.chmodSync(victim, fs.statSync(victim).mode);
    if (fs.readFileSync(marker, 'utf8') === 'answer') return initializeResult(p, 'tamper-tree');
    write({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'tamper-tree: started' } });
    return new Promise(() => {});
  },
  'tools/list': () => ({ tools: [{ name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }] }),
});
