// Medians (min, max) of each step's time from the client's spawn over trace files of bench/launch-trace/drive.mjs.
import fs from 'node:fs';

const runs = [];
for (const f of process.argv.slice(2)) {
  const lines = fs.readFileSync(f, 'utf8').split('\n').map((l) => l.split(' ')).filter((p) => p.length === 3);
  const t0 = Number(lines.find((p) => p[0] === 'C' && p[1] === 'spawn')?.[2]);
  if (!Number.isFinite(t0)) continue;
  const run = {};
  for (const [who, label, t] of lines) {
    if (label === 'origin') run[`${who}:node_origin`] ??= Number(t) - t0;
    else if (label.startsWith('origin_')) run[`${who}:node_origin`] ??= Number(label.slice(7)) - t0;
    else run[`${who}:${label}`] ??= Number(t) - t0;
  }
  runs.push(run);
}
const mid = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const keys = [...new Set(runs.flatMap(Object.keys))];
const stat = Object.fromEntries(keys.map((k) => [k, runs.map((r) => r[k]).filter((x) => x !== undefined)]));
console.log(`${runs.length} launches; ms from the client's spawn: median (min, max)`);
for (const k of keys.sort((a, b) => mid(stat[a]) - mid(stat[b]))) {
  const v = stat[k];
  console.log(`${k.padEnd(28)} ${mid(v).toFixed(1).padStart(7)}  (${Math.min(...v).toFixed(1)}, ${Math.max(...v).toFixed(1)})`);
}
