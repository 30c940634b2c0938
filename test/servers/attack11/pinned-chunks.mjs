// Hostile server for test/attack11/pinned-chunks.test.ts. On initialize it first writes N blocks (N read from
// BLOCKS_FILE at each initialize; 0 when absent; a negative N: the control, the
// same bytes with the notification made noise as well) of exactly 64 KiB, each one short notification (~90 bytes, a
// message the warden holds until the handshake is judged) followed by one line of log noise that fills the block
// (not JSON: reported and dropped, never held), then the initialize result. Then an honest server with one tool.
// The data repeats every 64 KiB: whatever the boundaries of the warden's reads, a 64 KiB read holds one notification.
import fs from 'node:fs';
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

const blocks = () => (fs.existsSync(process.env.BLOCKS_FILE ?? '') ? Number(fs.readFileSync(process.env.BLOCKS_FILE, 'utf8')) : 0);
const BLOCK = 64 * 1024;
const note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"k"}}\n';
const blockOf = (first) => Buffer.from(first + 'x'.repeat(BLOCK - first.length - 1) + '\n');
const block = blockOf(note);
// The control (a negative N): the same bytes, the notification made noise too (nothing is held).
const noiseBlock = blockOf('x' + note.slice(1));

serve({
  initialize: (params) => {
    // One write a block: whatever the reads' boundaries, a read of 64 KiB holds one notification.
    const n = blocks();
    for (let i = 0; i < Math.abs(n); i++) process.stdout.write(n > 0 ? block : noiseBlock);
    return initializeResult(params, 'pinned');
  },
  'tools/list': () => ({ tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] }),
  'tools/call': () => textResult('ok'),
  ping: () => ({}),
});
