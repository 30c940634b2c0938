// The timeline of one `mcp-warden run` with timestamps in both processes (docs/adr/0056-launch-on-node-24.md): a
// scratch build with trace.patch applied writes `performance.timeOrigin + performance.now()` at each step, the
// warden to $WARDEN_TRACE, the server's preload to /tmp/wtrace-server.log (its environment is built from
// nothing); this client spawns `run`, sends initialize and appends its own spawn and result times.
// Never commit a build with the patch. Usage (in a copy of the checkout: git apply, npm run build there):
//   node bench/launch-trace/drive.mjs NODE COPY/dist/cli/main.js HOME ID OUT.log     (one launch, HOME enrolled)
//   node bench/launch-trace/summarize.mjs OUT*.log                                    (medians from the spawn)
import { spawn } from 'node:child_process';
import fs from 'node:fs';

const [node, warden, home, id, out] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();
fs.rmSync('/tmp/wtrace-server.log', { force: true });
const t0 = now();
const c = spawn(node, [warden, '--home', home, 'run', id], { env: { ...process.env, WARDEN_TRACE: out }, stdio: ['pipe', 'pipe', 'inherit'] });
c.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'trace', version: '1' } } }) + '\n');
let buf = '';
c.stdout.on('data', (d) => {
  buf += d;
  if (!buf.includes('\n')) return;
  fs.appendFileSync(out, `C spawn ${t0.toFixed(2)}\nC result ${now().toFixed(2)}\n`);
  c.stdin.end();
});
c.on('exit', () => {
  try {
    fs.appendFileSync(out, fs.readFileSync('/tmp/wtrace-server.log'));
  } catch {}
});
