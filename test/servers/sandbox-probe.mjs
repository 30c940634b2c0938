// A hostile server for the sandbox tests (test/sandbox/): each tool tries one thing a confined server must not
// do, or may do, and answers what happened: "ok: ..." or "denied: ERRNO". Paths and ports come from the call.
//   read {path}            reads a file (the user's ~/.ssh/id_rsa, the warden's home)
//   write {path, times}    writes a file (outside its grant, its data directory, its own script), `times` times
//   connect {host, port}   opens a TCP connection ({path}: a unix socket)
//   proxy {host, port, times}  asks the proxy in HTTPS_PROXY for a tunnel to host:port (times: that many in turn)
//                          and, through it, GET /: "ok: <status> <body>" or "refused: <the proxy's status line>"
//   fetch {url}            the node's own fetch() (through HTTPS_PROXY only where node reads it: NODE_USE_ENV_PROXY)
//   load {path}            imports a module (outside its attested set: the module guard refuses it)
//   whoami                 its pid, cwd, TMPDIR, network namespace, HTTPS_PROXY
//   hide {path}            tries to hide a read of a file: set its times back, chmod it, open it O_NOATIME
//                          ("utimes: ERRNO|ok, chmod: ..., noatime: ...")
import fs from 'node:fs';
import net from 'node:net';
import { initializeResult, serve, textResult } from './lib/rpc.mjs';

const attempt = (fn) => {
  try {
    return textResult(`ok: ${fn()}`);
  } catch (e) {
    return textResult(`denied: ${e.code ?? e.message}`);
  }
};

function connect({ host, port, path }) {
  return new Promise((resolve) => {
    const s = net.connect(path !== undefined ? { path, timeout: 5000 } : { host, port, timeout: 5000 });
    s.once('connect', () => (s.destroy(), resolve(textResult('ok: connected'))));
    s.once('timeout', () => (s.destroy(), resolve(textResult('denied: ETIMEDOUT'))));
    s.once('error', (e) => resolve(textResult(`denied: ${e.code ?? e.message}`)));
  });
}

/** One tunnel through the proxy named by HTTPS_PROXY, and a GET / over it. */
function tunnel(host, port) {
  return new Promise((resolve) => {
    const proxy = new URL(process.env.HTTPS_PROXY);
    const s = net.connect({ host: proxy.hostname, port: Number(proxy.port), timeout: 5000 });
    let text = '';
    let open = false;
    s.once('connect', () => s.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`));
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (!open) {
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = text.slice(0, text.indexOf('\r\n'));
        if (!/^HTTP\/1\.1 200 /.test(status)) return (s.destroy(), resolve(`refused: ${status}`));
        open = true;
        text = '';
        s.write(`GET / HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`);
      }
    });
    s.once('end', () => resolve(`ok: ${text.slice(0, text.indexOf('\r\n'))} ${text.slice(text.indexOf('\r\n\r\n') + 4)}`));
    s.once('timeout', () => (s.destroy(), resolve('denied: ETIMEDOUT')));
    s.once('error', (e) => resolve(`denied: ${e.code ?? e.message}`));
  });
}

async function viaProxy({ host, port, times = 1 }) {
  let last = '';
  for (let i = 0; i < times; i++) last = await tunnel(host, port);
  return textResult(last);
}

const tried = (fn) => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return e.code ?? e.message;
  }
};

const tool = (name) => ({ name, description: `Tries to ${name}`, inputSchema: { type: 'object' } });
serve({
  initialize: (p) => initializeResult(p, 'sandbox-probe'),
  'tools/list': () => ({ tools: ['read', 'write', 'connect', 'proxy', 'fetch', 'load', 'whoami', 'hide'].map(tool) }),
  'tools/call': (p) => {
    const a = p.arguments ?? {};
    if (p.name === 'read') return attempt(() => fs.readFileSync(a.path, 'utf8').length + ' bytes');
    if (p.name === 'write') return attempt(() => {
      for (let i = 1; i < (a.times ?? 1); i++) tried(() => fs.appendFileSync(a.path, 'written by sandbox-probe\n'));
      return (fs.appendFileSync(a.path, 'written by sandbox-probe\n'), 'written');
    });
    if (p.name === 'connect') return connect(a);
    if (p.name === 'proxy') return viaProxy(a);
    if (p.name === 'fetch') return fetch(a.url).then(async (r) => textResult(`ok: ${r.status} ${await r.text()}`), (e) => textResult(`denied: ${e.cause?.code ?? e.cause?.message ?? e.message}`));
    if (p.name === 'load') return import(a.path).then((m) => textResult(`ok: ${m.default}`), (e) => textResult(`denied: ${e.code ?? e.message}`));
    if (p.name === 'hide') {
      const utimes = tried(() => fs.utimesSync(a.path, 0, 0));
      const chmod = tried(() => fs.chmodSync(a.path, 0o666));
      const noatime = tried(() => fs.closeSync(fs.openSync(a.path, fs.constants.O_RDONLY | fs.constants.O_NOATIME)));
      return textResult(`utimes: ${utimes}, chmod: ${chmod}, noatime: ${noatime}`);
    }
    if (p.name === 'whoami') return textResult(JSON.stringify({ pid: process.pid, cwd: process.cwd(), tmpdir: process.env.TMPDIR ?? null, netns: fs.readlinkSync('/proc/self/ns/net'), proxy: process.env.HTTPS_PROXY ?? null }));
    return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${p.name}` }] };
  },
});
