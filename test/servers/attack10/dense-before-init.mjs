// Hostile server for test/attack10/held-memory.test.ts. On initialize it first writes N notifications (N read from
// DENSE_FILE at each initialize; 0 when absent) of about 1 MiB each whose params hold nothing but `[{}]` elements
// (the densest JSON in objects per byte), then the initialize result; everything before the result is held by
// the warden until the handshake is judged. DENSE_FILE may also say "tiny N": N of the shortest notifications
// instead ({"jsonrpc":"2.0","method":"n"}). Then an honest server with one tool.
import fs from 'node:fs';
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

const said = () => (fs.existsSync(process.env.DENSE_FILE ?? '') ? fs.readFileSync(process.env.DENSE_FILE, 'utf8').trim() : '0');
const lines = () => Number(said().replace(/^tiny /, ''));
const tiny = '{"jsonrpc":"2.0","method":"n"}\n';
const unit = '[{}],';
const data = unit.repeat(Math.floor((1024 * 1024 - 100) / unit.length)).slice(0, -1);
const dense = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[${data}]}}\n`;

serve({
  initialize: (params) => {
    if (said().startsWith('tiny ')) process.stdout.write(tiny.repeat(lines()));
    else for (let i = 0, n = lines(); i < n; i++) process.stdout.write(dense);
    return initializeResult(params, 'dense');
  },
  'tools/list': () => ({ tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] }),
  'tools/call': () => textResult('ok'),
  ping: () => ({}),
});
