// Runs the sandbox's egress proxy (dist/sandbox/egress-proxy.js) in this process, under a mount namespace whose
// /etc/hosts the test wrote (bubblewrap binds it), so a granted name resolves to what a name's owner could make
// it resolve to. An upstream HTTP server stands for a service on the host's loopback. For each name of argv[2..]
// it sends `CONNECT name:upstreamPort` through the proxy and prints, as one JSON line, the proxy's status line,
// what it recorded as denied, and whether the loopback service was reached.
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, ...names] = process.argv.slice(2);
const { EgressProxy } = await import(pathToFileURL(path.join(dist, 'sandbox/egress-proxy.js')).href);
let reached = 0;
const upstream = net.createServer((c) => {
  reached++;
  c.end('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nloopback');
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const port = upstream.address().port;
const denied = [];
const proxy = new EgressProxy({ grants: names.map((host) => ({ host, ports: [port] })), denied: (d) => denied.push(d) });
const listener = net.createServer();
proxy.serve(listener);
await new Promise((r) => listener.listen(0, '127.0.0.1', r));
const results = [];
for (const name of names) {
  const answer = await new Promise((resolve, reject) => {
    const s = net.connect(listener.address().port, '127.0.0.1', () => s.write(`CONNECT ${name}:${port} HTTP/1.1\r\nHost: ${name}:${port}\r\n\r\n`));
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (/^HTTP\/1\.1 200 /.test(text)) s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      if (text.endsWith('loopback')) s.destroy();
    });
    s.once('close', () => resolve(text));
    s.once('error', reject);
  });
  results.push({ name, status: answer.slice(0, answer.indexOf('\r\n')), reachedLoopback: answer.endsWith('loopback') });
}
proxy.close();
listener.close();
upstream.close();
process.stdout.write(`${JSON.stringify({ results, denied, reached })}\n`);
