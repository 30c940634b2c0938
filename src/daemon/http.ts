import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WardenMetrics } from './metrics.js';

// /metrics (Prometheus text format) and /status (JSON) on a loopback address only.

export function serveHttp(host: string, port: number, metrics: WardenMetrics, status: () => unknown): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.method !== 'GET') {
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
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve({ server, url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` });
    });
  });
}
