import { parseDomainGrant, type Sandbox } from './schema.js';

// The network half of a sandbox proposal (docs/adr/0063-observed-enrollment.md, addendum "The network, from
// confined sessions"). The enrollment launch keeps the host's network and records no connection; a confined
// session with network domains does: each connection its proxy refused is a `sandbox_denied` event (kind
// connect, reason not_granted). `sandbox <id> --propose` offers those names, grouped, as the server's own
// behaviour to review: a name a server asks for is exactly what a server sending data out asks for, so nothing
// here is granted by `--propose --yes`; the operator grants each with --allow-domain. Only an entry the schema
// admits is offered as a grant (so a printed command holds only valid names); the rest is listed as not grantable.

/** Entries offered, and entries listed as not grantable, at most this many each. */
export const MAX_OFFERED = 32;

export interface NetworkSeen {
  /** Where it was learned: the proxy's refusals in the audit log's tail. */
  from: 'sandbox_denied';
  /** Grants that would admit what was refused, most asked for first: `name`, `name:PORT` or `localhost:PORT`. */
  refused: { grant: string; times: number; last: string }[];
  /** What was refused that no grant can name (an address, a malformed name), with why. */
  notGrantable: { host: string; port: number; why: string }[];
  /** More distinct entries were seen than are listed. */
  truncated: boolean;
}

/** The grant that admits `host:port`: the name alone for HTTPS and HTTP, else with its port. */
const grantFor = (host: string, port: number): string => (host !== 'localhost' && (port === 443 || port === 80) ? host : `${host}:${port}`);

/** Whether the sandbox's current domains admit `host:port` already. */
function admitted(sandbox: Sandbox | undefined, host: string, port: number): boolean {
  if (typeof sandbox !== 'object' || typeof sandbox.network !== 'object') return false;
  return sandbox.network.domains.some((d) => {
    const g = parseDomainGrant(d);
    return !('problem' in g) && g.host === host && g.ports.includes(port);
  });
}

/** What the proxy of server `id` refused as not granted, from audit `history` (oldest first), less what its
 *  `sandbox` admits now. */
export function networkSeen(history: readonly Record<string, unknown>[], id: string, sandbox: Sandbox | undefined): NetworkSeen {
  const offered = new Map<string, { grant: string; times: number; last: string }>();
  const refusedOther = new Map<string, { host: string; port: number; why: string }>();
  for (const e of history) {
    if (e.event !== 'sandbox_denied' || e.server !== id || e.kind !== 'connect' || e.reason !== 'not_granted') continue;
    const { host, port } = e;
    if (typeof host !== 'string' || typeof port !== 'number' || !Number.isInteger(port) || admitted(sandbox, host, port)) continue;
    const grant = grantFor(host, port);
    const g = parseDomainGrant(grant);
    if ('problem' in g) {
      refusedOther.set(`${host}:${port}`, { host, port, why: g.problem });
      continue;
    }
    const seen = offered.get(grant) ?? { grant, times: 0, last: '' };
    seen.times += 1;
    seen.last = String(e.ts ?? '');
    offered.set(grant, seen);
  }
  const refused = [...offered.values()].sort((a, b) => b.times - a.times || (a.grant < b.grant ? -1 : 1));
  const notGrantable = [...refusedOther.values()].sort((a, b) => (`${a.host}:${a.port}` < `${b.host}:${b.port}` ? -1 : 1));
  return { from: 'sandbox_denied', refused: refused.slice(0, MAX_OFFERED), notGrantable: notGrantable.slice(0, MAX_OFFERED), truncated: refused.length > MAX_OFFERED || notGrantable.length > MAX_OFFERED };
}
