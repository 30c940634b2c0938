import fs from 'node:fs';
import http from 'node:http';

// `mcp-warden status` asks a running daemon over its owner-only status socket; no daemon (no socket, or
// nobody listening on it) is not an error: the caller falls back to reading the files.

const MAX_BODY = 4 * 1024 * 1024;

/** The daemon's /status as parsed JSON, or undefined when no daemon answers within `timeoutMs`. */
export function fetchDaemonStatus(socketPath: string, timeoutMs = 1_000): Promise<unknown> {
  if (!fs.existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: '/status', timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > MAX_BODY) req.destroy();
        else chunks.push(d);
      });
      res.on('end', () => {
        try {
          resolve(res.statusCode === 200 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined);
        } catch {
          resolve(undefined);
        }
      });
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}
