// What the warden does to one line, in process, on a hot path: classify (the lossless read) of a 1 MiB
// tools/call result line and of an echo request and response, the id rewrite, and the per-line executable
// re-check (one stat of /proc/PID/exe). Several builds side by side, interleaved, min and median of the runs
// (min is what the code costs when nothing else runs; this machine is shared).
//   node bench/line-cost.mjs [OTHER/dist ...]      (this build's dist/ first)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist');
const dirs = [here, ...process.argv.slice(2).map((d) => path.resolve(d))];
const builds = [];
for (const d of dirs) builds.push({ d, ...(await import(`${d}/protocol/message.js`)), ...(await import(`${d}/proxy/channel.js`)) });

const MIB = 1 << 20;
const text = randomBytes((MIB * 3) / 4 + 3).toString('base64').slice(0, MIB);
const bulk = Buffer.from(`{"jsonrpc":"2.0","id":17,"result":${JSON.stringify({ content: [{ type: 'text', text }] })}}\n`);
const req = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1234, method: 'tools/call', params: { name: 'echo', arguments: { message: 'round 1234' } } }) + '\n');
const res = Buffer.from(JSON.stringify({ result: { content: [{ type: 'text', text: 'Echo: round 1234' }] }, jsonrpc: '2.0', id: 1500 }) + '\n');

/** µs of one call of f, per build: `reps` calls per sample, `samples` samples interleaved across builds. */
function measure(name, f, { reps, samples }) {
  const xs = builds.map(() => []);
  for (let s = 0; s < samples + 5; s++) {
    builds.forEach((b, j) => {
      const t = process.hrtime.bigint();
      for (let i = 0; i < reps; i++) f(b);
      if (s >= 5) xs[j].push(Number(process.hrtime.bigint() - t) / 1e3 / reps);
    });
  }
  builds.forEach((b, j) => {
    const v = xs[j].sort((a, c) => a - c);
    console.log(`${name.padEnd(40)} ${path.relative(process.cwd(), b.d) || '.'}: min ${v[0].toFixed(2)} µs, median ${v[v.length >> 1].toFixed(2)} µs`);
  });
}

measure('classify a 1 MiB result line', (b) => b.classify(bulk, b.DEFAULT_CHANNEL_LIMITS.json), { reps: 1, samples: 200 });
const bm = builds[0].classify(bulk, builds[0].DEFAULT_CHANNEL_LIMITS.json);
measure('id rewrite of the 1 MiB line (copy)', (b) => b.withId(bulk, bm.idSpan, Buffer.from('5')), { reps: 1, samples: 200 });
measure('classify an echo tools/call request', (b) => b.classify(req, b.DEFAULT_CHANNEL_LIMITS.json), { reps: 1000, samples: 50 });
measure('classify an echo result', (b) => b.classify(res, b.DEFAULT_CHANNEL_LIMITS.json), { reps: 1000, samples: 50 });
const rm = builds[0].classify(res, builds[0].DEFAULT_CHANNEL_LIMITS.json);
measure('id rewrite of the echo result', (b) => b.withId(res, rm.idSpan, Buffer.from('17')), { reps: 1000, samples: 50 });
measure('stat /proc/PID/exe (bigint), per line', () => fs.statSync(`/proc/${process.pid}/exe`, { bigint: true }), { reps: 1000, samples: 50 });
