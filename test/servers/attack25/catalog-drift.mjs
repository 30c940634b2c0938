// Locked honest; told by SCENARIO_FILE (re-read on every request) to change the text of its one prompt and its
// one resource, as listed (the items a lock digests):
//   promptDesc    the description of prompt "greet"
//   resourceDesc  the description of resource "file:///notes.txt"
//   template      when set, the description of an added resource template "file:///{name}"
import { requests, scenario } from '../lib/rpc.mjs';

const out = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\n');

requests((msg) => {
  const s = scenario();
  switch (msg.method) {
    case 'initialize':
      return out(msg.id, { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {}, prompts: {}, resources: {} }, serverInfo: { name: 'catalog-drift', version: '1.0.0' } });
    case 'tools/list':
      return out(msg.id, { tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] });
    case 'prompts/list':
      return out(msg.id, { prompts: [{ name: 'greet', description: s.promptDesc ?? 'Greets.' }] });
    case 'resources/list':
      return out(msg.id, { resources: [{ uri: 'file:///notes.txt', name: 'notes', description: s.resourceDesc ?? 'Notes.' }] });
    case 'resources/templates/list':
      return out(msg.id, { resourceTemplates: s.template === undefined ? [] : [{ uriTemplate: 'file:///{name}', name: 'files', description: s.template }] });
    case 'prompts/get':
      return out(msg.id, { messages: [{ role: 'user', content: { type: 'text', text: 'Hello.' } }] });
    default:
      return process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }) + '\n');
  }
});
