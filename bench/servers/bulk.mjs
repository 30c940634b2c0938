// A minimal stdio MCP server for the bulk-throughput bench: one tool, `bulk`, whose result is one text block of
// `bytes` printable ASCII characters (default 1 MiB), sent as one line built once per size.
//   mcp-warden add bulk --yes -- node bench/servers/bulk.mjs
import { randomBytes } from 'node:crypto';

const MIB = 1024 * 1024;
const TOOL = {
  name: 'bulk',
  description: 'Returns a text result of the given size (bytes, default 1 MiB)',
  inputSchema: { type: 'object', properties: { bytes: { type: 'integer', minimum: 0, maximum: 16 * MIB } } },
};
const bodies = new Map(); // size -> the result's JSON text
const body = (n) => {
  if (!bodies.has(n)) {
    const text = randomBytes(Math.ceil((n * 3) / 4) + 3).toString('base64').slice(0, n);
    bodies.set(n, JSON.stringify({ content: [{ type: 'text', text }] }));
  }
  return bodies.get(n);
};
const send = (id, result) => process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}\n`);
const error = (id, code, message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n');

function handle(msg) {
  if (msg.id === undefined || typeof msg.method !== 'string') return; // notifications, responses
  switch (msg.method) {
    case 'initialize':
      return send(msg.id, JSON.stringify({ protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bulk', version: '1.0.0' } }));
    case 'ping':
      return send(msg.id, '{}');
    case 'tools/list':
      return send(msg.id, JSON.stringify({ tools: [TOOL] }));
    case 'tools/call': {
      if (msg.params?.name !== 'bulk') return send(msg.id, JSON.stringify({ isError: true, content: [{ type: 'text', text: `Unknown tool: ${msg.params?.name}` }] }));
      const n = msg.params.arguments?.bytes ?? MIB;
      if (!Number.isInteger(n) || n < 0 || n > 16 * MIB) return error(msg.id, -32602, 'bytes: an integer from 0 to 16 MiB');
      return send(msg.id, body(n));
    }
    default:
      return error(msg.id, -32601, `Method not found: ${msg.method}`);
  }
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    try {
      handle(JSON.parse(line));
    } catch {
      error(null, -32700, 'Parse error');
    }
  }
});
process.stdin.on('end', () => process.exit(0));
