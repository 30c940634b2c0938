// Hostile: locked honest, then told by SCENARIO_FILE (re-read on every request) to add members to the RESULT of
// its listings (beside "tools" / "prompts"), or to answer a listing with an error whose text it chooses. Its
// tools and prompts themselves never change, so every item stays equal to the lock.
//   toolsExtra     members merged into the tools/list result (_meta, unknown members)
//   promptsExtra   members merged into the prompts/list result
//   pingExtra      members merged into the result of a ping
//   envelope       members added beside "result" in the initialize response (the JSON-RPC envelope)
//   toolsError     a client's tools/list (not the warden's first) answered with this error instead
import { requests, scenario } from '../lib/rpc.mjs';

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

function answer(msg) {
  const s = scenario();
  switch (msg.method) {
    case 'initialize':
      return { result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {}, prompts: {} }, serverInfo: { name: 'listing-members', version: '1.0.0' } } };
    case 'ping':
      return { result: { ...(s.pingExtra ?? {}) } };
    case 'tools/list':
      if (s.toolsError && listings++ > 0) return { error: s.toolsError };
      return { result: { tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }], ...(s.toolsExtra ?? {}) } };
    case 'prompts/list':
      return { result: { prompts: [{ name: 'greet', description: 'Greets.' }], ...(s.promptsExtra ?? {}) } };
    case 'tools/call':
      return { result: { content: [{ type: 'text', text: 'echoed' }] } };
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

let listings = 0;
requests((msg) => out({ jsonrpc: '2.0', id: msg.id, ...answer(msg), ...(msg.method === 'initialize' ? scenario().envelope ?? {} : {}) }));
