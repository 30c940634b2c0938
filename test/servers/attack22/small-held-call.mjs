// Purpose-built for test/attack22/small-ask-cancel: serves one tool, `send`, and never answers its calls (a call
// that runs long; a call of any other name is answered 'Unknown tool'); appends every line it receives to LOG_FILE, so a test sees what was forwarded and the id the
// server was given.
import fs from 'node:fs';
import { requests } from '../lib/rpc.mjs';

const out = (value) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...value }) + '\n');
requests((msg) => {
  if (msg.method === 'initialize') out({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'held-call', version: '1.0.0' } } });
  else if (msg.method === 'tools/list') out({ id: msg.id, result: { tools: [{ name: 'send', description: 'Send a message.', inputSchema: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } } } }] } });
  else if (msg.method === 'ping') out({ id: msg.id, result: {} });
  else if (msg.method === 'tools/call' && msg.params?.name !== 'send') out({ id: msg.id, error: { code: -32602, message: 'Unknown tool' } });
  else if (msg.method !== 'tools/call') out({ id: msg.id, error: { code: -32601, message: 'Method not found' } });
}, { onLine: (line) => fs.appendFileSync(process.env.LOG_FILE, line + '\n') });
