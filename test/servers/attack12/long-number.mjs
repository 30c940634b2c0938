// Hostile server for test/attack12/long-number.test.ts. Honest, one tool, except that its tools/list answers give
// the tool's inputSchema a `maximum` written with N zeros (N read from ZEROS_FILE at each tools/list; 0 when
// absent, as at `add`): N > 0: `1.000…0001` (a one after the zeros: the same double as 1, a different decimal);
// N < 0: the control, `1.000…000` (|N| zeros, nothing after them: the same length, the same double, the same
// decimal). Both are valid JSON numbers, in a line of a few dozen KiB, far under every cap.
import fs from 'node:fs';
import { requests } from '../lib/rpc.mjs';

const zeros = () => (fs.existsSync(process.env.ZEROS_FILE ?? '') ? Number(fs.readFileSync(process.env.ZEROS_FILE, 'utf8')) : 0);
const maximum = (n) => (n > 0 ? `1.${'0'.repeat(n)}1` : n < 0 ? `1.${'0'.repeat(-n)}` : '1.5');
const write = (text) => process.stdout.write(text + '\n');
const answer = (id, result) => write(JSON.stringify({ jsonrpc: '2.0', id, result }));

requests((msg) => {
  if (msg.method === 'initialize') {
    answer(msg.id, { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'long-number', version: '1' } });
  } else if (msg.method === 'tools/list') {
    // Written by hand: JSON.stringify would write the number as 1.
    write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":{"tools":[{"name":"scale","description":"Scales a value.","inputSchema":{"type":"object","properties":{"factor":{"type":"number","maximum":${maximum(zeros())}}}}}]}}`);
  } else if (msg.method === 'tools/call') {
    answer(msg.id, { content: [{ type: 'text', text: 'ok' }] });
  } else {
    answer(msg.id, {});
  }
});
