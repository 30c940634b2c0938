// Runs the sandbox's egress proxy (dist/sandbox/egress-proxy.js) inside a network namespace that has only its own
// loopback, for test/sandbox/egress-address.test.ts. Every granted name resolves through a resolver of the test
// that answers from a script (a list of answers per name, one per lookup, the last repeated), while the
// namespace's /etc/hosts (bound by the test) maps the same names to 127.0.0.1: a proxy that resolved a second
// time, through either, would reach the upstream on this loopback. A public address the proxy rightly connects to
// has no route here (ENETUNREACH): no packet leaves the namespace, let alone the machine.
//
// argv: <egress-proxy.js> <JSON {name: [[address, ...], ...]}>. Prints one JSON line: the proxy's answers by name,
// the lookups it made, its denials, how many connections the upstream accepted, and what the system resolver says of each name.
import dns from 'node:dns/promises';
import net from 'node:net';
import os from 'node:os';

const [modulePath, scriptJson] = process.argv.slice(2);
const ifaces = Object.keys(os.networkInterfaces());
if (ifaces.some((i) => i !== 'lo')) {
  console.error(`refusing to run: this network namespace has interfaces other than lo (${ifaces.join(', ')})`);
  process.exit(2);
}
const { EgressProxy } = await import(modulePath);
const script = JSON.parse(scriptJson);

let received = 0;
const upstream = net.createServer((s) => (received++, s.destroy()));
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const port = upstream.address().port;

const lookups = {};
const lookup = async (host) => {
  const n = (lookups[host] = (lookups[host] ?? 0) + 1);
  const answers = script[host];
  if (!answers) throw Object.assign(new Error(`no answer scripted for ${host}`), { code: 'ENOTFOUND' });
  return answers[Math.min(n, answers.length) - 1].map((address) => ({ address, family: net.isIP(address.replace(/%.*$/, '')) }));
};
const denied = [];
const names = Object.keys(script);
const proxy = new EgressProxy({ grants: names.map((host) => ({ host, ports: [port] })), denied: (d) => denied.push(d), lookup });
const listener = net.createServer();
proxy.serve(listener);
await new Promise((r) => listener.listen(0, '127.0.0.1', r));

/** The first line the proxy answers a CONNECT to `host` with. */
const ask = (host) =>
  new Promise((resolve, reject) => {
    const s = net.connect(listener.address().port, '127.0.0.1', () => s.write(`CONNECT ${host}:${port} HTTP/1.1\r\n\r\n`));
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n')) s.destroy();
    });
    s.once('close', () => resolve(text.split('\r\n')[0]));
    s.once('error', reject);
  });

const answers = {};
for (const name of names) answers[name] = await ask(name);
const system = {};
for (const name of names) system[name] = await dns.lookup(name).then((a) => a.address, (e) => e.code);
proxy.close();
listener.close();
upstream.close();
console.log(JSON.stringify({ port, answers, lookups, denied, received, system }));
