// CPU (user + sys) of importing a module in a fresh node process, with node's compile cache on where the node
// has one (22.1+; a cache directory per file under bench/out/import-cpu/, warmed by two uncounted runs), the
// files alternating run by run. For `run`'s code: dist/bundle/plain-run.js against another build's
// dist/bundle/run-*.js chunk or plain-run.js (docs/performance.md, "Issue 31", 2026-12-07).
//   node bench/import-cpu.mjs [--node PATH] [--runs N] FILE...
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const NODE = opt('node', process.execPath);
const RUNS = Number(opt('runs', 20));
const files = argv.map((f) => path.resolve(f));
const cacheRoot = path.resolve(import.meta.dirname, 'out/import-cpu');
fs.mkdirSync(cacheRoot, { recursive: true });
const probe =
  "require('node:module').enableCompileCache?.(process.argv[2]);const c0=process.cpuUsage();" +
  'import(process.argv[1]).then(()=>{const c=process.cpuUsage(c0);const t=process.cpuUsage();' +
  'process.stdout.write(JSON.stringify({imp:(c.user+c.system)/1000,all:(t.user+t.system)/1000}));process.exit(0)})';
const res = new Map(files.map((f) => [f, { imp: [], all: [] }]));
for (let i = 0; i < RUNS + 2; i++) {
  for (const f of i % 2 ? files : [...files].reverse()) {
    const r = spawnSync(NODE, ['-e', probe, f, path.join(cacheRoot, f.replace(/\W/g, '_'))], { encoding: 'utf8' });
    if (!r.stdout) throw new Error(`importing ${f} failed: ${r.stderr.slice(0, 400)}`);
    if (i < 2) continue;
    const o = JSON.parse(r.stdout);
    res.get(f).imp.push(o.imp);
    res.get(f).all.push(o.all);
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${NODE}: CPU ms, medians of ${RUNS} processes a file`);
console.log('| file | import | whole process |\n|---|---|---|');
for (const [f, r] of res) console.log(`| ${f} | ${med(r.imp).toFixed(1)} | ${med(r.all).toFixed(1)} |`);
