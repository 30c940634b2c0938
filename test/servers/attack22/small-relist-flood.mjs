// Purpose-built for test/attack22/small-alert-flood: every other tools/list is answered with a page that
// cannot be admitted (a tool without a name), followed by notifications/tools/list_changed, so that a client
// lists again; the listings in between (the warden's re-lists) are valid, so the session stays open.
import { requests } from '../lib/rpc.mjs';

const out = (value) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...value }) + '\n');
let listings = 0;
requests((msg) => {
  if (msg.method === 'initialize') out({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'relist-flood', version: '1.0.0' } } });
  else if (msg.method === 'tools/list') {
    if (++listings % 2 === 1) out({ id: msg.id, result: { tools: [{ name: 'lookup', description: 'Look up an item.', inputSchema: { type: 'object' } }] } });
    else {
      out({ id: msg.id, result: { tools: [{ description: 'a tool without a name' }] } });
      out({ method: 'notifications/tools/list_changed' });
    }
  } else if (msg.method === 'tools/call') out({ id: msg.id, error: { code: -32602, message: 'Unknown tool' } });
  else if (msg.method === 'ping') out({ id: msg.id, result: {} });
  else out({ id: msg.id, error: { code: -32601, message: 'Method not found' } });
});
