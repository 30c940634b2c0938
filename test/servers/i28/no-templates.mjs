// Like mcp-server-kubernetes: advertises resources, lists them, and answers resources/templates/list "Method not
// found" (it has no templates). With TEMPLATES_FILE present it lists one template instead (a later release).
import fs from 'node:fs';
import { requests, write } from '../lib/rpc.mjs';

requests((m) => {
  const answer = (result) => write({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') return answer({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, resources: {} }, serverInfo: { name: 'no-templates', version: '1.0.0' } });
  if (m.method === 'tools/list') return answer({ tools: [{ name: 'get_pods', description: 'Lists pods.', inputSchema: { type: 'object' } }] });
  if (m.method === 'resources/list') return answer({ resources: [{ uri: 'k8s://namespaces', name: 'namespaces' }] });
  if (m.method === 'resources/read') return answer({ contents: [{ uri: m.params.uri, text: 'default' }] });
  if (m.method === 'resources/templates/list' && process.env.TEMPLATES_FILE && fs.existsSync(process.env.TEMPLATES_FILE)) return answer({ resourceTemplates: [{ uriTemplate: 'k8s://pods/{name}', name: 'pod' }] });
  if (m.method === 'ping') return answer({});
  write({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
});
