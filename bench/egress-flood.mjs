// What a server that floods its sandbox's proxy with connections costs the warden's relaying process
// (docs/adr/0060-egress-proxy.md, addendum: the pace). The proxy (dist/sandbox/egress-proxy.js, or --module FILE)
// in this process, an upstream and a client in two child processes; the client keeps 64 connections in flight
// for SECONDS, each a CONNECT to a granted localhost port, closed once answered (or refused: --denied asks for a
// port no grant names). Prints this process's CPU ms per second of flood, and connections answered a second.
//   node bench/egress-flood.mjs [--seconds S] [--denied] [--module FILE]
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const SECONDS = Number(arg('seconds', 5));
const DENIED = process.argv.includes('--denied');
const MODULE = arg('module', new URL('../dist/sandbox/egress-proxy.js', import.meta.url).pathname);
const { EgressProxy } = await import(pathToFileURL(path.resolve(MODULE)).href);

const UPSTREAM = `
const s = require('node:net').createServer((c) => c.on('error', () => {}));
s.listen(0, '127.0.0.1', () => process.send(s.address().port));
`;
const CLIENT = `
const net = require('node:net');
const [proxyPort, port, seconds] = process.argv.slice(1).map(Number);
const end = Date.now() + seconds * 1000;
let answered = 0;
function one() {
  if (Date.now() > end) return;
  const s = net.connect(proxyPort, '127.0.0.1', () => s.write('CONNECT localhost:' + port + ' HTTP/1.1\\r\\n\\r\\n'));
  s.once('data', () => (answered++, s.destroy()));
  s.once('error', () => {});
  s.once('close', one);
}
for (let i = 0; i < 64; i++) one();
setTimeout(() => process.send(answered), seconds * 1000 + 200);
`;

const upstream = spawn(process.execPath, ['-e', UPSTREAM], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise((r) => upstream.once('message', r));
const proxy = new EgressProxy({ grants: [{ host: 'localhost', ports: [port] }], denied: () => {} });
const listener = net.createServer();
proxy.serve(listener);
await new Promise((r) => listener.listen(0, '127.0.0.1', r));
const asked = DENIED ? port + 1 : port;
const mark = process.cpuUsage();
const started = performance.now();
const client = spawn(process.execPath, ['-e', CLIENT, String(listener.address().port), String(asked), String(SECONDS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const answered = await new Promise((r) => client.once('message', r));
const cpu = process.cpuUsage(mark);
const wall = (performance.now() - started) / 1000;
console.log(`egress proxy under a flood of ${DENIED ? 'refused' : 'granted'} connections, ${SECONDS} s, ${path.basename(MODULE)}`);
console.log(`| CPU ms per second of flood | connections answered a second |`);
console.log(`|---|---|`);
console.log(`| ${((cpu.user + cpu.system) / 1000 / wall).toFixed(1)} | ${(answered / SECONDS).toFixed(1)} |`);
proxy.close();
listener.close();
client.kill();
upstream.kill();
