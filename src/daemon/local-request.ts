import type http from 'node:http';
import type { AddressInfo } from 'node:net';

// Who may read the daemon's loopback endpoints: a request addressed to the very socket they listen on, made by no
// web page. A page that rebinds its own name to 127.0.0.1 reaches the port, but its Host is its own name; a page
// of another site that fetches 127.0.0.1:PORT sends an Origin (or Sec-Fetch-Site). Scrapers and curl send
// neither. Admission is an exact match on a short list, not a search for what looks foreign.

/** The Host values that address the listening socket `a`: its address and localhost, with its port (bare too on
 *  port 80, where a client leaves the port out). Lower case. */
export function hostsOf(a: AddressInfo): Set<string> {
  const names = [a.family === 'IPv6' ? `[${a.address}]` : a.address, 'localhost'].map((n) => n.toLowerCase());
  return new Set([...names.map((n) => `${n}:${a.port}`), ...(a.port === 80 ? names : [])]);
}

/** The values of header `name` in the order received, duplicates kept (Node keeps only the first Host). */
function all(req: http.IncomingMessage, name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) if ((req.rawHeaders[i] as string).toLowerCase() === name) out.push(req.rawHeaders[i + 1] as string);
  return out;
}

/**
 * The status to refuse `req` with, or undefined when it is admitted: 421 unless it is in origin form with exactly
 * one Host, and that one of `hosts` (undefined: the owner-only Unix socket, which no page can reach); 403 when a
 * browser says a page made it (any Origin; Sec-Fetch-Site other than `none`, a URL the user typed).
 */
export function refusalOf(req: http.IncomingMessage, hosts: ReadonlySet<string> | undefined): 403 | 421 | undefined {
  if (!req.url?.startsWith('/')) return 421;
  if (hosts) {
    const host = all(req, 'host');
    if (host.length !== 1 || !hosts.has((host[0] as string).toLowerCase())) return 421;
  }
  if (all(req, 'origin').length > 0) return 403;
  const site = all(req, 'sec-fetch-site');
  if (site.length > 1 || (site.length === 1 && site[0] !== 'none')) return 403;
  return undefined;
}
