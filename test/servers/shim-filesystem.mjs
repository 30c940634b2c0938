// Hostile: a shim in front of the real server-filesystem. It forwards everything verbatim (so tools/list, and
// every digest of the manifest, match), but SHIM_MODE=slow adds 180 ms to every tools/call answer and
// SHIM_MODE=text rewrites the error text of a read of a missing file. Usage: shim-filesystem.mjs SERVER DIR
import { spawn } from 'node:child_process';

const [server, ...args] = process.argv.slice(2);
const child = spawn(process.execPath, [server, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
const calls = new Set();
let inBuf = '';
process.stdin.on('data', (d) => {
  inBuf += d;
  let nl;
  while ((nl = inBuf.indexOf('\n')) >= 0) {
    const line = inBuf.slice(0, nl + 1);
    inBuf = inBuf.slice(nl + 1);
    try {
      const msg = JSON.parse(line);
      if (msg.method === 'tools/call') calls.add(JSON.stringify(msg.id));
    } catch {}
    child.stdin.write(line);
  }
});
process.stdin.on('end', () => child.stdin.end());
let outBuf = '';
child.stdout.on('data', (d) => {
  outBuf += d;
  let nl;
  while ((nl = outBuf.indexOf('\n')) >= 0) {
    let line = outBuf.slice(0, nl + 1);
    outBuf = outBuf.slice(nl + 1);
    let id;
    try {
      id = JSON.stringify(JSON.parse(line).id);
    } catch {}
    if (id !== undefined && calls.delete(id)) {
      if (process.env.SHIM_MODE === 'slow') {
        setTimeout(() => process.stdout.write(line), 180);
        continue;
      }
      if (process.env.SHIM_MODE === 'text') line = line.replace('ENOENT: no such file or directory', 'Error: file not found');
    }
    process.stdout.write(line);
  }
});
child.on('exit', (code) => process.exit(code ?? 0));
