// A loopback stand-in for a hosted git service (GitHub's tarball host), so that a test can show what npm does with
// a hosted git dependency pinned to a commit (`github:owner/repo#<40 hex>`) without the network.
//
//   node npm-git-host.mjs CERT_PEM KEY_PEM TARBALL_DIR [REQUEST_LOG]
//
// npm fetches such a dependency as https://codeload.github.com/<owner>/<repo>/tar.gz/<sha>. Pointed at this process
// as its https proxy (npm_config_https_proxy) and given CERT_PEM as its CA file (npm_config_cafile), npm opens a
// CONNECT tunnel here; the tunnel is answered by this process's own TLS server with CERT_PEM (a certificate for
// codeload.github.com), which serves TARBALL_DIR/<owner>/<repo>/<sha>.tgz, or 404. Every CONNECT and GET is
// appended to REQUEST_LOG ("CONNECT host:port", "GET /path STATUS"). It prints {"proxy": "http://127.0.0.1:PORT"}
// once listening and exits when its stdin closes, so it cannot outlive the test that started it.

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';

const [certFile, keyFile, root, requestLog] = process.argv.slice(2);
if (!certFile || !keyFile || !root) {
  process.stderr.write('usage: npm-git-host.mjs CERT_PEM KEY_PEM TARBALL_DIR [REQUEST_LOG]\n');
  process.exit(2);
}
const log = (line) => {
  if (requestLog) fs.appendFileSync(requestLog, `${line}\n`);
};

const host = https.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }, (req, res) => {
  const m = /^\/([A-Za-z0-9._-]+)\/([A-Za-z0-9._-]+)\/tar\.gz\/([0-9a-f]{40})$/.exec(new URL(req.url ?? '/', 'https://x').pathname);
  const file = m ? path.join(root, m[1], m[2], `${m[3]}.tgz`) : undefined;
  const body = file && fs.existsSync(file) ? fs.readFileSync(file) : undefined;
  log(`GET ${req.url} ${body ? 200 : 404}`);
  res.writeHead(body ? 200 : 404, { 'content-type': body ? 'application/x-gzip' : 'text/plain', 'content-length': body ? body.length : 9 });
  res.end(body ?? 'not found');
});

const proxy = http.createServer((req, res) => {
  log(`${req.method} ${req.url} 405`);
  res.writeHead(405);
  res.end();
});
proxy.on('connect', (req, socket, head) => {
  log(`CONNECT ${req.url}`);
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) socket.unshift(head);
  host.emit('connection', socket);
});

proxy.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ proxy: `http://127.0.0.1:${proxy.address().port}` }) + '\n');
});
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.exit(0));
