// Like @sentry/mcp-server: exits at once, saying so on stderr, when its access token is missing from the
// environment; serves one tool when it has it.
import { requests, write } from '../lib/rpc.mjs';

if (!process.env.DEMO_ACCESS_TOKEN) {
  process.stderr.write('Error: DEMO_ACCESS_TOKEN is required (or pass --access-token=...)\n');
  process.exit(1);
}
requests((m) => {
  const answer = (result) => write({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') return answer({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'needs-key', version: '1.0.0' } });
  if (m.method === 'tools/list') return answer({ tools: [{ name: 'whoami', description: 'Says who the token belongs to.', inputSchema: { type: 'object' } }] });
  if (m.method === 'tools/call') return answer({ content: [{ type: 'text', text: 'token ok' }] });
  if (m.method === 'ping') return answer({});
  write({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
});
