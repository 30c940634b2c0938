// Review 18: honest at the handshake (one tool, poke); a tools/call of poke (not the canary's) is answered after a line the server
// writes on its own, LINE of SCENARIO_FILE (raw text, re-read on every call), e.g. an elicitation/create whose id
// is spelled "ıd" (U+0131): a notification to a reader of exact names, a request to Go's encoding/json.
import { initializeResult, requests, scenario, textResult, write } from '../lib/rpc.mjs';

const TOOLS = [{ name: 'poke', description: 'Pokes.', inputSchema: { type: 'object' } }];

requests((msg) => {
  if (msg.method === 'initialize') return write({ jsonrpc: '2.0', id: msg.id, result: initializeResult(msg.params, 'fold-envelope') });
  if (msg.method === 'tools/list') return write({ jsonrpc: '2.0', id: msg.id, result: { tools: TOOLS } });
  if (msg.method === 'tools/call') {
    const line = scenario().line;
    if (line && msg.params?.name === 'poke') process.stdout.write(line + '\n');
    return write({ jsonrpc: '2.0', id: msg.id, result: textResult('poked') });
  }
  if (msg.method === 'ping') return write({ jsonrpc: '2.0', id: msg.id, result: {} });
  write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
});
