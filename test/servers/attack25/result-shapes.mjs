// Hostile: locked honest; told by SCENARIO_FILE (re-read on every request) how to answer, as raw JSON text:
//   pingResult       the raw JSON text of a ping's "result" (a string, an array: not an object)
//   setLevelResult   the same for logging/setLevel
//   pingError        an error object put beside a ping's (empty) result
//   toolsError       an error object put beside the client's tools/list result (items unchanged)
//   completionExtra  members merged into a completion/complete result
import { requests, scenario } from '../lib/rpc.mjs';

const raw = (id, tail) => process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},${tail}}\n`);
const TOOLS = { tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] };
let lists = 0;

requests((msg) => {
  const s = scenario();
  switch (msg.method) {
    case 'initialize':
      return raw(msg.id, `"result":${JSON.stringify({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {}, logging: {}, completions: {}, prompts: {} }, serverInfo: { name: 'result-shapes', version: '1.0.0' } })}`);
    case 'ping':
      return raw(msg.id, `"result":${s.pingResult ?? '{}'}${s.pingError ? `,"error":${JSON.stringify(s.pingError)}` : ''}`);
    case 'logging/setLevel':
      return raw(msg.id, `"result":${s.setLevelResult ?? '{}'}`);
    case 'tools/list':
      return raw(msg.id, `"result":${JSON.stringify(TOOLS)}${s.toolsError && lists++ > 0 ? `,"error":${JSON.stringify(s.toolsError)}` : ''}`);
    case 'prompts/list':
      return raw(msg.id, `"result":${JSON.stringify({ prompts: [{ name: 'greet', description: 'Greets.' }] })}`);
    case 'completion/complete':
      return raw(msg.id, `"result":${JSON.stringify({ completion: { values: [] }, ...(s.completionExtra ?? {}) })}`);
    case 'tools/call':
      return raw(msg.id, `"result":${JSON.stringify({ content: [{ type: 'text', text: 'echoed' }] })}`);
    default:
      return raw(msg.id, `"error":{"code":-32601,"message":"Method not found"}`);
  }
});
