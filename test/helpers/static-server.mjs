// Serves the files of a directory on loopback, for tests that need an HTTP origin (a TUF repository):
//
//   node static-server.mjs DIR [REQUEST_LOG]
//
// `GET /a/b` answers DIR/a/b (404 when there is no such file). Prints `{"url": "http://127.0.0.1:PORT"}` on
// stdout once listening, appends "GET /path STATUS" per request to REQUEST_LOG if given, and exits when its stdin
// closes. A process of its own because tests drive the warden with spawnSync (registry-server.mjs says why).

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [root, requestLog] = process.argv.slice(2);
if (!root) {
  process.stderr.write('usage: static-server.mjs DIR [REQUEST_LOG]\n');
  process.exit(2);
}
const base = path.resolve(root);

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  const file = path.resolve(base, '.' + url);
  let status = 404;
  let body = 'not found\n';
  if (req.method === 'GET' && file.startsWith(base + path.sep)) {
    try {
      body = fs.readFileSync(file);
      status = 200;
    } catch {
      // 404
    }
  }
  if (requestLog) fs.appendFileSync(requestLog, `${req.method} ${url} ${status}\n`);
  res.writeHead(status, { 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
