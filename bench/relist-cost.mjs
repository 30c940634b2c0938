// The cost of periodic re-listing on round-trip latency (ADR 0008):
//   node bench/relist-cost.mjs HOME CALLS   (HOME holds a server 'everything' added with mcp-warden add)
// Sets relistEvery.calls of that server to CALLS, then times 2,000 echo calls on one session.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
const [home, calls] = process.argv.slice(2);
const cfg = JSON.parse(fs.readFileSync(home + '/servers.json')); cfg.servers.everything.relistEvery = { calls: Number(calls), seconds: 300 }; fs.writeFileSync(home + '/servers.json', JSON.stringify(cfg));
const child = spawn('node', [new URL('../dist/cli/main.js', import.meta.url).pathname, '--home', home, 'run', 'everything'], { stdio: ['pipe', 'pipe', 'ignore'] });
let buf = ''; const waiting = new Map(); let id = 1;
child.stdout.on('data', (d) => { buf += d; let nl; while ((nl = buf.indexOf('\n')) >= 0) { const m = JSON.parse(buf.slice(0, nl)); buf = buf.slice(nl + 1); waiting.get(m.id)?.(m); } });
const req = (method, params) => new Promise((r) => { const i = id++; waiting.set(i, r); child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: i, method, params }) + '\n'); });
await req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'b', version: '1' } });
const s = [];
for (let i = 0; i < 2200; i++) { const t = process.hrtime.bigint(); await req('tools/call', { name: 'echo', arguments: { message: 'x' } }); if (i >= 200) s.push(Number(process.hrtime.bigint() - t) / 1e6); }
s.sort((a, b) => a - b);
console.log('relist every', calls, 'p50', s[1000].toFixed(3), 'p90', s[1800].toFixed(3), 'p95', s[1900].toFixed(3), 'p99', s[1980].toFixed(3), 'max', s[1999].toFixed(1));
child.stdin.end();
