// A server whose listing depends on the client's capabilities, as real ones do (tools that ask the client to
// sample or elicit): `always` for every client, `summarize` only for a client that offered sampling.
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

let sampling = false;
const tool = (name) => ({ name, description: `The ${name} tool`, inputSchema: { type: 'object', properties: {} } });
serve({
  initialize: (p) => {
    sampling = p?.capabilities?.sampling !== undefined;
    return initializeResult(p, 'conditional-tools');
  },
  'tools/list': () => ({ tools: [tool('always'), ...(sampling ? [tool('summarize')] : [])] }),
  'tools/call': (p) => textResult(`called ${p.name}`),
});
