// What the warden's `ask` for a 2026-07-28 client costs in-process (docs/adr/0047): what every modern request
// pays for the retry-member check (no requestState, no inputResponses), and one question plus its accepted
// retry (the HMAC over the call, the nonce, the retry read and stripped), both lines parsed as the session does.
//   node bench/ask-state-cost.mjs [--n N]
// Needs a build (npm run build). Medians of 7 runs of N iterations each, µs per iteration.
import { WardenInputRequired } from '../dist/proxy/input-required.js';
import { readJson } from '../dist/protocol/json/reader.js';

const n = Number(process.argv[process.argv.indexOf('--n') + 1]) || 20000;
const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
const call = { name: 'write_file', arguments: { path: '/tmp/x', content: 'y'.repeat(1024) }, _meta: meta };
const plain = readJson(JSON.stringify(call));
const asks = new WardenInputRequired();

function perIteration(fn) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t) / n / 1000;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const none = [];
const pair = [];
for (let run = 0; run < 7; run++) {
  none.push(perIteration(() => asks.read('tools/call', plain)));
  pair.push(
    perIteration(() => {
      const q = JSON.parse(asks.question('1', 'tools/call', plain, 'Allow?', 60_000).toString()).result;
      const key = Object.keys(q.inputRequests)[0];
      const r = asks.read('tools/call', readJson(JSON.stringify({ ...call, inputResponses: { [key]: { action: 'accept' } }, requestState: q.requestState })));
      if (r.kind !== 'warden' || r.answer !== 'accept') throw new Error(`not admitted: ${JSON.stringify(r)}`);
    }),
  );
}
console.log(`a modern request without retry members: ${median(none).toFixed(2)} µs`);
console.log(`a question and its accepted retry (a 1 KiB argument; both lines parsed): ${median(pair).toFixed(1)} µs`);
