// A 2025-only server of the kind that exits on any request before `initialize` (some SDKs terminate on an
// unrecognized pre-initialize request): the first request of a launch must be initialize, else it exits 1.
// Every request it reads is appended to LOG_FILE with the reading process's pid, so launches can be told apart.
import fs from 'node:fs';
import { initializeResult, requests, write } from '../lib/rpc.mjs';

let initialized = false;
requests((msg) => {
  if (process.env.LOG_FILE) fs.appendFileSync(process.env.LOG_FILE, JSON.stringify({ pid: process.pid, method: msg.method }) + '\n');
  if (!initialized && msg.method !== 'initialize') process.exit(1);
  if (msg.method === 'initialize') {
    initialized = true;
    write({ jsonrpc: '2.0', id: msg.id, result: { ...initializeResult(msg.params, 'strict-classic'), instructions: 'Use echo.' } });
  } else if (msg.method === 'tools/list') write({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] } });
  else write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
});
