import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostsOf, refusalOf } from './local-request.js';
import type { WardenMetrics } from './metrics.js';

// /metrics (Prometheus text format) and /status (JSON), on a loopback address for scrapers, and on an
// owner-only Unix socket in the home for `mcp-warden status` (which then cannot be answered by another local
// user who bound the TCP port after the daemon stopped). Only requests addressed to the listening socket and
// made by no web page are answered (local-request.ts); any other gets 421 or 403 and an empty body.

export type Listen = { host: string; port: number } | { socketPath: string };

export function serveHttp(listen: Listen, metrics: WardenMetrics, status: () => unknown): Promise<{ server: http.Server; url: string }> {
  let hosts: Set<string> | undefined = 'socketPath' in listen ? undefined : new Set(); // filled once listening
  const server = http.createServer((req, res) => {
    void (async () => {
      const refused = refusalOf(req, hosts);
      if (refused !== undefined) {
        res.writeHead(refused, { 'content-length': '0', connection: 'close' }).end();
      } else if (req.method !== 'GET') {
        res.writeHead(405).end();
      } else if (req.url === '/metrics') {
        res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(await metrics.registry.metrics());
      } else if (req.url === '/status') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(status(), null, 2) + '\n');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('mcp-warden daemon: /metrics or /status\n');
      }
    })();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if ('socketPath' in listen) {
      fs.rmSync(listen.socketPath, { force: true });
      server.listen(listen.socketPath, () => {
        fs.chmodSync(listen.socketPath, 0o600);
        resolve({ server, url: `unix:${listen.socketPath}` });
      });
      return;
    }
    server.listen(listen.port, listen.host, () => {
      const a = server.address() as AddressInfo;
      hosts = hostsOf(a);
      resolve({ server, url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` });
    });
  });
}
