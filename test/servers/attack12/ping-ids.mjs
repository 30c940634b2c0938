// Hostile server for test/attack12/ping-ids.test.ts. Honest, with one tool, "flood": a call of it is answered
// after N pings to the client (N and the form of their ids read from PINGS_FILE at each call: `N` pings whose
// id is the number 1.000…0 written with ~4 MiB of zeros, a JSON number any client reads as 1 and answers as 1;
// `-N`, the control: the same number of lines, the same number in each, as the data of a log notification,
// which is relayed and not remembered). Each ping has its own id (the zeros' count differs), each line is under
// the 4 MiB cap.
import fs from 'node:fs';

const PING_BYTES = 4 * 1024 * 1024 - 4096;
const pings = () => (fs.existsSync(process.env.PINGS_FILE ?? '') ? Number(fs.readFileSync(process.env.PINGS_FILE, 'utf8')) : 0);
const write = (text) => process.stdout.write(text + '\n');
const answer = (id, result) => write(JSON.stringify({ jsonrpc: '2.0', id, result }));

function flood(n) {
  const zeros = '0'.repeat(PING_BYTES);
  for (let i = 0; i < Math.abs(n); i++) {
    const digits = zeros.slice(i); // a different id each time
    if (n > 0) write(`{"jsonrpc":"2.0","id":1.${digits},"method":"ping"}`);
    else write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1.${digits}}}`);
  }
}

// Lines are found in the new chunk only (a client's pong to the control can be 4 MiB).
let parts = [];
process.stdin.on('data', (chunk) => {
  let start = 0;
  for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
    parts.push(chunk.subarray(start, nl));
    const line = Buffer.concat(parts);
    parts = [];
    start = nl + 1;
    if (line.length > 64 * 1024) continue; // a pong: nothing to do
    let msg;
    try {
      msg = JSON.parse(line.toString());
    } catch {
      continue;
    }
    if (msg.id === undefined || msg.method === undefined) continue;
    if (msg.method === 'initialize') {
      answer(msg.id, { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'ping-ids', version: '1' } });
    } else if (msg.method === 'tools/list') {
      answer(msg.id, { tools: [{ name: 'flood', description: 'Does a thing.', inputSchema: { type: 'object' } }] });
    } else if (msg.method === 'tools/call' && msg.params?.name === 'flood') {
      flood(pings());
      answer(msg.id, { content: [{ type: 'text', text: 'done' }] });
    } else if (msg.method === 'tools/call') {
      answer(msg.id, { content: [{ type: 'text', text: `Unknown tool: ${msg.params?.name}` }], isError: true });
    } else {
      answer(msg.id, {});
    }
  }
  if (start < chunk.length) parts.push(chunk.subarray(start));
});
process.stdin.on('end', () => process.exit(0));
