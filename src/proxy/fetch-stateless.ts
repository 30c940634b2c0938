import { printable } from '../escape.js';
import type { Handshake, SurfaceCaps } from '../surface/admit.js';
import { admitDiscover, unconfirmed } from '../surface/discover.js';
import type { Catalogs, ServedCatalogs } from '../surface/catalog.js';
import { ProtocolError, ServerChannel, type ChannelLimits } from './channel.js';
import { CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, MODERN_REVISION, VERSION_KEY } from './era.js';
import { DEFAULT_OFFERED, fetchOnce, openAsClient, type OutOfBandClient, type ServerStreams } from './fetch.js';
import { listAllTools, listCatalogs } from './listing.js';

// The stateless fetch flow of revision 2026-07-28 (surfacelock SPEC.md §3.4; docs/adr/0046-locks-over-both-flows.md):
// server/discover with the full `_meta` envelope, then every listing page with it, no handshake. The requests are
// an SDK v2 client's that probed in place: the probe under the id "server-discover-probe-1" with its member
// order, then the session's numbered requests, the envelope (protocol version, client info, client capabilities,
// in that order) on each. An admissible discover result whose `supportedVersions` lists the offered revision is
// the flow's commit point: a failure before it is a PreCommitError (the only one a fetch may fall back from, to
// the classic flow on a fresh launch); any failure after it is terminal.

export type Flow = 'classic' | 'stateless';

/** How long the probe waits for a discover answer before it counts as "not a stateless server" (a 2025 server
 *  may leave a request before initialize unanswered). */
export const PROBE_TIMEOUT_MS = 10_000;
const PROBE_ID = '"server-discover-probe-1"';
/** Members of a 2026-07-28 listing result beside its items: negotiation and caching, not surface (formats.md). */
const MODERN_RESULT = new Set(['resultType', 'ttlMs', 'cacheScope', '_meta']);

/** A failure of the stateless flow before its commit point. */
export class PreCommitError extends Error {
  constructor(readonly inner: Error) {
    super(inner.message);
    this.name = 'PreCommitError';
  }
}

/** The flow a lock's protocol record selects: its recorded flow; without one (an entry written before flows
 *  were recorded) 'probe' for an offer of revision 2026-07-28 or later, else 'classic'. */
export function selectedFlow(protocol: { offered: string; flow?: Flow }): Flow | 'probe' {
  return protocol.flow ?? (protocol.offered >= MODERN_REVISION ? 'probe' : 'classic');
}

/** The `_meta` envelope an SDK v2 client sends, as JSON text (it writes it with JSON.stringify). */
export function modernEnvelope(client: OutOfBandClient, capabilities: Record<string, unknown>): string {
  return JSON.stringify({ [VERSION_KEY]: client.offered, [CLIENT_INFO_KEY]: client.clientInfo, [CLIENT_CAPABILITIES_KEY]: capabilities });
}

/** Opens a stateless session (server/discover, confirmed) as a client of the server. */
export async function openStateless(io: ServerStreams, client: OutOfBandClient, capabilities: Record<string, unknown>, caps: SurfaceCaps, limits: ChannelLimits, onNoise: (reason: string) => void): Promise<{ channel: ServerChannel; handshake: Handshake }> {
  const channel = new ServerChannel(io.serverIn, io.serverOut, limits, {
    message: () => {}, // an SDK v2 client drops a server's requests on a modern connection, and answers none
    answer: () => {},
    refused: (_reason, detail) => onNoise(detail),
    noise: (_b, reason) => onNoise(reason),
    inadmissible: () => {},
    oversize: () => {},
    unverified: () => {},
    end: () => {},
  }, { verifyWriter: io.verifyWriter });
  const envelope = modernEnvelope(client, capabilities);
  channel.style.speakModern(envelope);
  let handshake: Handshake;
  try {
    const response = await channel.requestLine('server/discover', PROBE_ID, `{"jsonrpc":"2.0","id":${PROBE_ID},"method":"server/discover","params":{"_meta":${envelope}}}\n`, Math.min(PROBE_TIMEOUT_MS, limits.requestTimeoutMs));
    const error = response.get('error');
    if (error !== undefined) {
      const m = error instanceof Map ? error.get('message') : undefined;
      throw new ProtocolError(`the server answered server/discover with an error: ${typeof m === 'string' ? printable(m, 200) : 'no message'}`);
    }
    // The commit point: an admissible result (exact keys, no case-variant alias, no member of a 2025 initialize
    // result, the negotiation members in their shapes) whose supportedVersions lists the offered revision.
    const discovered = admitDiscover(response.get('result'), client.offered, caps);
    const why = unconfirmed(discovered, client.offered);
    if (why) throw new ProtocolError(why);
    handshake = discovered.handshake;
  } catch (err) {
    channel.end();
    throw new PreCommitError(err as Error);
  }
  return { channel, handshake };
}

/** Fetches the surface once over an open server, by the flow given (`keep`: the session stays open, as in fetchOnce). */
export async function fetchByFlow(flow: Flow, io: ServerStreams, client: OutOfBandClient, capabilities: Record<string, unknown>, caps: SurfaceCaps, limits: ChannelLimits, onNoise: (reason: string) => void, keep = false): Promise<{ channel: ServerChannel; handshake: Handshake; tools: Awaited<ReturnType<typeof listAllTools>>; catalogs: Catalogs; servedCatalogs: ServedCatalogs; pageMembers: string[] }> {
  if (flow === 'classic') return fetchOnce(io, client, capabilities, caps, limits, onNoise, keep);
  const { channel, handshake } = await openStateless(io, client, capabilities, caps, limits, onNoise);
  const members: string[] = [];
  const tools = await listAllTools(channel, caps, members);
  const servedCatalogs: ServedCatalogs = {};
  const catalogs = await listCatalogs(channel, handshake, caps, members, servedCatalogs);
  if (!keep) channel.end();
  const pageMembers = members.filter((m) => !MODERN_RESULT.has(m.slice(m.indexOf(' ') + 1)));
  return { channel, handshake, tools, catalogs, servedCatalogs, pageMembers };
}

/** Opens a session by a committed flow (canaries). */
export function openByFlow(flow: Flow, io: ServerStreams, client: OutOfBandClient, capabilities: Record<string, unknown>, caps: SurfaceCaps, limits: ChannelLimits, onNoise: (reason: string) => void): Promise<{ channel: ServerChannel; handshake: Handshake }> {
  return flow === 'classic' ? openAsClient(io, client, capabilities, caps, limits, onNoise) : openStateless(io, client, capabilities, caps, limits, onNoise);
}

/** What a flow offers when nothing is recorded: the probe offers revision 2026-07-28, its classic fallback the
 *  newest 2025 revision (what the classic flow always offered). */
export function offeredFor(flow: Flow): string {
  return flow === 'stateless' ? MODERN_REVISION : DEFAULT_OFFERED;
}
