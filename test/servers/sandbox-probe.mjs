// A hostile server for the sandbox tests (test/sandbox/): each tool tries one thing a confined server must not
// do, or may do, and answers what happened: "ok: ..." or "denied: ERRNO". Paths and ports come from the call.
//   read {path}            reads a file (the user's ~/.ssh/id_rsa, the warden's home)
//   write {path}           writes a file (outside its grant, its data directory, its own script)
//   connect {host, port}   opens a TCP connection
//   load {path}            imports a module (outside its attested set: the module guard refuses it)
//   whoami                 its pid, cwd, TMPDIR
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

function connect({ host, port }) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 5000 });
    s.once('connect', () => (s.destroy(), resolve(textResult('ok: connected'))));
    s.once('timeout', () => (s.destroy(), resolve(textResult('denied: ETIMEDOUT'))));
    s.once('error', (e) => resolve(textResult(`denied: ${e.code ?? e.message}`)));
  });
}

const tool = (name) => ({ name, description: `Tries to ${name}`, inputSchema: { type: 'object' } });
serve({
  initialize: (p) => initializeResult(p, 'sandbox-probe'),
  'tools/list': () => ({ tools: ['read', 'write', 'connect', 'load', 'whoami'].map(tool) }),
  'tools/call': (p) => {
    const a = p.arguments ?? {};
    if (p.name === 'read') return attempt(() => fs.readFileSync(a.path, 'utf8').length + ' bytes');
    if (p.name === 'write') return attempt(() => (fs.appendFileSync(a.path, 'written by sandbox-probe\n'), 'written'));
    if (p.name === 'connect') return connect(a);
    if (p.name === 'load') return import(a.path).then((m) => textResult(`ok: ${m.default}`), (e) => textResult(`denied: ${e.code ?? e.message}`));
    if (p.name === 'whoami') return textResult(JSON.stringify({ pid: process.pid, cwd: process.cwd(), tmpdir: process.env.TMPDIR ?? null }));
    return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${p.name}` }] };
  },
});
