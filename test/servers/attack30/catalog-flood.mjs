// Revision 2026-07-28 only, with one prompt. Locked honest; with SCENARIO_FILE's `drift` true its prompt's
// description changes, and a subscriptions/listen asking for prompt list changes is acknowledged and then sent
// `flood` (default 300) notifications/prompts/list_changed at once, each stamped with the subscription.
// With `flip` N instead, the listen is acknowledged and sent one list change; each prompts/list after it is
// answered with the prompt's description flipping between three texts (two drifted, one the locked), then followed
// by the next list change, N in all (each one sent after the warden started listing for the one before).
import { requests, write, scenario } from '../lib/rpc.mjs';

const MODERN = '2026-07-28';
const meta = { 'io.modelcontextprotocol/serverInfo': { name: 'catalog-flood', version: '1.0.0' } };
const SUB = 'io.modelcontextprotocol/subscriptionId';
const FLIPS = ['Greets, differently.', 'Greets.', 'Greets, otherwise.'];
let listen;
let sent = 0;
const change = () => {
  sent++;
  write({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed', params: { _meta: { [SUB]: listen } } });
};

requests((msg) => {
  const s = scenario();
  const done = (result) => write({ jsonrpc: '2.0', id: msg.id, result: { ...result, resultType: 'complete', _meta: meta } });
  switch (msg.method) {
    case 'server/discover':
      return done({ supportedVersions: [MODERN], capabilities: { tools: {}, prompts: { listChanged: true } } });
    case 'tools/list':
      return done({ tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] });
    case 'prompts/list':
      if (s.flip && listen !== undefined) {
        done({ prompts: [{ name: 'greet', description: FLIPS[sent % FLIPS.length] }] });
        if (sent < s.flip) change();
        return;
      }
      return done({ prompts: [{ name: 'greet', description: s.drift ? 'Greets, differently.' : 'Greets.' }] });
    case 'subscriptions/listen':
      listen = msg.id;
      write({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: msg.params?.notifications ?? {}, _meta: { [SUB]: msg.id } } });
      if (s.flip) return change();
      for (let i = 0; i < (s.flood ?? 300); i++) write({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed', params: { _meta: { [SUB]: msg.id } } });
      return;
    case 'initialize':
      return write({ jsonrpc: '2.0', id: msg.id, error: { code: -32022, message: 'Unsupported protocol version' } });
    default:
      return write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
  }
});
