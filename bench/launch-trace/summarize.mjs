// Medians (min, max) of each step's time from the client's spawn over trace files of bench/launch-trace/drive.mjs,
// then the warden's CPU (user + sys, ms since its start) at each of its steps: on a shared machine the wall-clock
// steps move with the load, the CPU ones much less.
import fs from 'node:fs';

const runs = [];
const cpus = [];
for (const f of process.argv.slice(2)) {
  const lines = fs.readFileSync(f, 'utf8').split('\n').map((l) => l.split(' ')).filter((p) => p.length === 3);
  const t0 = Number(lines.find((p) => p[0] === 'C' && p[1] === 'spawn')?.[2]);
  if (!Number.isFinite(t0)) continue;
  const run = {};
  const cpu = {};
  for (const [who, label, t] of lines) {
    if (who === 'U') cpu[label] ??= Number(t);
    else if (label === 'origin') run[`${who}:node_origin`] ??= Number(t) - t0;
    else if (label.startsWith('origin_')) run[`${who}:node_origin`] ??= Number(label.slice(7)) - t0;
    else run[`${who}:${label}`] ??= Number(t) - t0;
  }
  runs.push(run);
  cpus.push(cpu);
}
const mid = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function table(rows) {
  const keys = [...new Set(rows.flatMap(Object.keys))];
  const stat = Object.fromEntries(keys.map((k) => [k, rows.map((r) => r[k]).filter((x) => x !== undefined)]));
  for (const k of keys.sort((a, b) => mid(stat[a]) - mid(stat[b]))) {
    const v = stat[k];
    console.log(`${k.padEnd(28)} ${mid(v).toFixed(1).padStart(7)}  (${Math.min(...v).toFixed(1)}, ${Math.max(...v).toFixed(1)})`);
  }
}
console.log(`${runs.length} launches; ms from the client's spawn: median (min, max)`);
table(runs);
if (cpus.some((c) => Object.keys(c).length)) {
  console.log("the warden's CPU (user + sys) at its steps, ms: median (min, max)");
  table(cpus);
}
