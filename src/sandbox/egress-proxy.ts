import dns from 'node:dns/promises';
import net from 'node:net';
import { Gate, Pace } from './pace.js';
import { classifyAddress } from './public-address.js';
import type { DomainGrant } from './schema.js';

// The HTTP proxy a server with `network: { domains }` reaches the world through (docs/adr/0060-egress-proxy.md).
// It runs in the warden's own process, accepting on a listening socket that lives in the sandbox's network
// namespace (sandbox/egress.ts), and connects out from the host's. It admits a CONNECT to, or a plain request
// with an absolute http:// URI for, a host:port a grant names exactly, and answers anything else 403. It
// resolves the name itself, once; a granted name (other than localhost) with any address that is not public
// (sandbox/public-address.ts) is refused too, and otherwise it connects to the very address it checked (an IP
// literal: net.connect does not resolve it again, and is given a resolver that refuses should it try). It reads
// only the request head (bounded); what flows after is never looked at.

/** Connections open at once for one session; a connection past it is closed at once. */
export const MAX_CONNECTIONS = 64;
/** The request head (request line and headers) in bytes, up to the blank line. */
export const MAX_HEAD = 8 * 1024;
/** How long a connection may take to send its head, and an outbound connection to open. */
export const HEAD_MS = 10_000;
/** A tunnel or request with no byte either way for this long is closed. */
export const IDLE_MS = 5 * 60_000;
/** New connections a session may open at once before the pace applies, and how many a second after that: one
 *  past the pace is not refused but waits (unread) for its turn, within MAX_CONNECTIONS open. */
export const CONNECTION_BURST = 64;
export const CONNECTIONS_PER_SECOND = 50;
/** Names resolved at once a session (dns.lookup runs on node's four resolver threads, which the warden's own
 *  webhook alerts need too); the rest wait their turn. */
export const MAX_LOOKUPS = 2;

/** What the proxy refused: kind "connect", the host and port asked for (bounded), and why. */
export interface EgressDenial {
  kind: 'connect';
  host: string;
  port: number;
  reason: 'not_granted' | 'loopback_address' | 'private_address';
  /** For loopback_address and private_address: the address the name resolved to that is not public (an IP
   *  literal as the resolver gave it, bounded). */
  address?: string;
}

/** A name's addresses, as dns.lookup(name, { all: true }) gives them. */
export type Resolve = (host: string) => Promise<readonly { address: string }[]>;

export interface EgressProxyConfig {
  grants: readonly DomainGrant[];
  denied: (d: EgressDenial) => void;
  /** How names are resolved: the system's resolver (dns.lookup, /etc/hosts then DNS) unless given. Whatever it
   *  answers is judged the same way; the tests give one that answers differently on a second lookup. */
  lookup?: Resolve;
}

const systemLookup: Resolve = (host) => dns.lookup(host, { all: true });

/** For net.connect: it is handed IP literals only, so a call to this is a resolution the proxy did not judge. */
function noSecondLookup(host: string, _opts: unknown, cb: (err: Error | null, address: string, family: number) => void): void {
  cb(Object.assign(new Error(`the egress proxy does not resolve ${JSON.stringify(host.slice(0, 64))} twice`), { code: 'ENOTFOUND' }), '', 0);
}

/** host and port of an authority ("name:port", "[v6]:port"), lower-cased, or undefined. */
function authority(text: string, defaultPort: number | undefined): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._%~-]{1,255})(?::([0-9]{1,5}))?$/.exec(text);
  if (!m) return undefined;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (port === undefined || port < 1 || port > 65535) return undefined;
  return { host: (m[1] as string).toLowerCase(), port };
}

/** What a request head asks for: the target, whether it is a tunnel, or undefined when it is no proxy request. */
function target(head: string): { host: string; port: number; tunnel: boolean } | undefined {
  const first = head.slice(0, head.indexOf('\r\n'));
  const m = /^([A-Z]{1,16}) (\S{1,2048}) HTTP\/1\.[01]$/.exec(first);
  if (!m) return undefined;
  if (m[1] === 'CONNECT') {
    const a = authority(m[2] as string, undefined);
    return a && { ...a, tunnel: true };
  }
  const u = /^http:\/\/([^/?#]+)(?:[/?#]|$)/i.exec(m[2] as string);
  const a = u ? authority(u[1] as string, 80) : undefined;
  return a && { ...a, tunnel: false };
}

const bounded = (s: string): string => (s.length > 255 ? `${s.slice(0, 252)}...` : s);

export class EgressProxy {
  private open = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly pace = new Pace(CONNECTION_BURST, CONNECTIONS_PER_SECOND);
  private readonly lookups = new Gate(MAX_LOOKUPS);

  constructor(private readonly cfg: EgressProxyConfig) {}

  /** Serves the connections `listener` accepts (a server already listening). */
  serve(listener: net.Server): void {
    listener.on('connection', (s) => this.accept(s));
  }

  /** Ends every connection (the session is over). */
  close(): void {
    this.pace.stop();
    for (const s of this.sockets) s.destroy();
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
  }

  private accept(client: net.Socket): void {
    if (this.open >= MAX_CONNECTIONS) return void client.destroy();
    this.open++;
    client.once('close', () => this.open--);
    this.track(client);
    client.setTimeout(HEAD_MS, () => client.destroy());
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > MAX_HEAD) this.answer(client, 431, 'Request Header Fields Too Large');
        return;
      }
      if (end + 4 > MAX_HEAD) return this.answer(client, 431, 'Request Header Fields Too Large');
      client.off('data', onData);
      client.pause();
      void this.forward(client, buf.subarray(0, end + 4), buf.subarray(end + 4));
    };
    // Read once the pace allows: until then its bytes wait in the kernel (and count against MAX_CONNECTIONS).
    this.pace.run(() => void (client.destroyed || client.on('data', onData)));
  }

  private answer(client: net.Socket, status: number, text: string, body = ''): void {
    client.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }

  private deny(client: net.Socket, d: EgressDenial): void {
    this.cfg.denied({ ...d, host: bounded(d.host), ...(d.address === undefined ? {} : { address: bounded(d.address) }) });
    const what = d.reason === 'loopback_address' ? 'the name resolves to a loopback address, which' : d.reason === 'private_address' ? 'the name resolves to an address that is not public, which' : 'this host and port';
    this.answer(client, 403, 'Forbidden', `mcp-warden: ${what} is not granted to this server's sandbox\n`);
  }

  private async forward(client: net.Socket, head: Buffer, rest: Buffer): Promise<void> {
    const t = target(head.toString('latin1'));
    if (!t) return this.answer(client, 400, 'Bad Request', 'mcp-warden: expected CONNECT host:port or an absolute http:// URI\n');
    const grant = this.cfg.grants.find((g) => g.host === t.host && g.ports.includes(t.port));
    if (!grant) return this.deny(client, { kind: 'connect', host: t.host, port: t.port, reason: 'not_granted' });
    let address = '127.0.0.1';
    if (grant.host !== 'localhost') {
      let found: readonly { address: string }[] | undefined;
      try {
        found = await this.lookups.run(async () => (client.destroyed ? undefined : (this.cfg.lookup ?? systemLookup)(t.host)));
      } catch {
        return this.answer(client, 502, 'Bad Gateway', 'mcp-warden: the name does not resolve\n');
      }
      if (found === undefined) return;
      if (found.length === 0) return this.answer(client, 502, 'Bad Gateway', 'mcp-warden: the name does not resolve\n');
      for (const { address: a } of found) {
        const c = classifyAddress(String(a));
        if (c !== 'public') return this.deny(client, { kind: 'connect', host: t.host, port: t.port, reason: c === 'loopback' ? 'loopback_address' : 'private_address', address: String(a) });
      }
      address = (found[0] as { address: string }).address;
    }
    if (client.destroyed) return;
    // `address` is an IP literal judged above (or the host's own 127.0.0.1 for a localhost grant): net.connect
    // connects to it as it is; the lookup given cannot be reached unless it were a name.
    const upstream = net.connect({ host: address, port: t.port, lookup: noSecondLookup });
    this.track(upstream);
    upstream.setTimeout(HEAD_MS, () => upstream.destroy());
    let connected = false;
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => {
      if (connected) client.destroy();
      else if (!client.destroyed) this.answer(client, 502, 'Bad Gateway', 'mcp-warden: the granted host did not accept the connection\n');
    });
    upstream.once('connect', () => {
      connected = true;
      for (const s of [client, upstream]) s.setTimeout(IDLE_MS, () => (client.destroy(), upstream.destroy()));
      if (t.tunnel) client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      else upstream.write(head);
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }
}
