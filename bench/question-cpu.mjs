// CPU (user + sys, best of 3) of the name check on one elicitation request of N characters (default the walk's
// 256 KiB bound) made of one unit repeated: layered escapes (review 24's), Markdown brackets and image marks (the
// parser's slowest input), both, and HTML (refused before anything is parsed). Run after `npm run build`.
//   node bench/question-cpu.mjs            N=131000 node bench/question-cpu.mjs
import { questionImpersonation } from '../dist/proxy/ask.js';

const m = (o) => new Map(Object.entries(o));
const N = Number(process.env.N ?? 256 * 1024 - 15);
const units = { layered: '&amp;amp;amp;amp;#1;%25252525', brackets: '[', images: '![', layeredBrackets: '[&amp;amp;amp;#1;%252525', html: '<a ' };
questionImpersonation(m({ message: 'warm up &amp; %25 [a](b)' }));
for (const [name, unit] of Object.entries(units)) {
  const message = unit.repeat(Math.ceil(N / unit.length)).slice(0, N);
  let best = Infinity;
  let found;
  for (let i = 0; i < 3; i++) {
    const before = process.cpuUsage();
    found = questionImpersonation(m({ mode: 'form', message }));
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  console.log(`${name}\t${best.toFixed(1)} ms\t${found ?? 'admitted'}`);
}
