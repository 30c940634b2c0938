// What the network proxy of a sandbox with domains costs the process it runs in, the warden's relaying process
// (docs/adr/0060-egress-proxy.md): the proxy (dist/sandbox/egress-proxy.js) in this process, a client and an
// upstream HTTP server in two child processes; the client opens a CONNECT tunnel to the upstream and reads
// MIB MiB through it, then opens and closes CONNS tunnels one after the other. This process's CPU time
// (process.cpuUsage) per MiB carried and per tunnel opened. Tunnels past the proxy's burst are paced (50 a second:
// 500 take about 9 s a round); what a flood costs is bench/egress-flood.mjs.
//   node bench/egress-proxy.mjs [--mib N] [--conns N] [--rounds R]
import { spawn } from 'node:child_process';
import net from 'node:net';
import { EgressProxy } from '../dist/sandbox/egress-proxy.js';
import { fmt, median } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const MIB = arg('mib', 256);
const CONNS = arg('conns', 500);
const ROUNDS = arg('rounds', 5);

const UPSTREAM = `
const http = require('node:http');
const chunk = Buffer.alloc(1 << 20, 120);
const s = http.createServer((req, res) => {
  const n = Number(new URL(req.url, 'http://x').searchParams.get('mib'));
  res.writeHead(200, { 'content-length': n * chunk.length });
  let i = 0;
  const more = () => { while (i < n) { i++; if (!res.write(chunk)) return res.once('drain', more); } res.end(); };
  more();
});
s.listen(0, '127.0.0.1', () => process.send(s.address().port));
`;
const CLIENT = `
const net = require('node:net');
const [proxyPort, port, mib, conns] = process.argv.slice(1).map(Number);
function tunnel(path, read) {
  return new Promise((resolve, reject) => {
    const s = net.connect(proxyPort, '127.0.0.1', () => s.write('CONNECT localhost:' + port + ' HTTP/1.1\\r\\n\\r\\n'));
    let head = true, got = 0;
    s.on('data', (d) => {
      if (head) { head = false; return s.write('GET ' + path + ' HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'); }
      got += d.length;
    });
    s.on('end', () => resolve(got));
    s.on('error', reject);
  });
}
(async () => {
  process.send({ phase: 'bulk' });
  const got = await tunnel('/?mib=' + mib);
  process.send({ phase: 'conns', got });
  for (let i = 0; i < conns; i++) await tunnel('/?mib=0');
  process.send({ phase: 'done' });
})();
`;

const upstream = spawn(process.execPath, ['-e', UPSTREAM], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise((r) => upstream.once('message', r));
const proxy = new EgressProxy({ grants: [{ host: 'localhost', ports: [port] }], denied: () => {} });
const listener = net.createServer();
proxy.serve(listener);
await new Promise((r) => listener.listen(0, '127.0.0.1', r));
const proxyPort = listener.address().port;

const perMib = [];
const perConn = [];
for (let round = 0; round < ROUNDS; round++) {
  const client = spawn(process.execPath, ['-e', CLIENT, String(proxyPort), String(port), String(MIB), String(CONNS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let mark = process.cpuUsage();
  await new Promise((resolve) =>
    client.on('message', (m) => {
      const now = process.cpuUsage(mark);
      const ms = (now.user + now.system) / 1000;
      if (m.phase === 'conns') {
        if (m.got < MIB * 1024 * 1024) throw new Error(`read ${m.got} bytes`);
        perMib.push(ms / MIB);
      }
      if (m.phase === 'done') perConn.push(ms / CONNS), resolve();
      mark = process.cpuUsage();
    }),
  );
}
console.log(`egress proxy in this process: ${MIB} MiB through one CONNECT tunnel, then ${CONNS} tunnels opened and closed; ${ROUNDS} rounds`);
console.log(`| CPU ms per MiB carried | CPU ms per tunnel |`);
console.log(`|---|---|`);
console.log(`| ${fmt(median(perMib))} (min ${fmt(Math.min(...perMib))}) | ${fmt(median(perConn))} (min ${fmt(Math.min(...perConn))}) |`);
listener.close();
upstream.kill();
