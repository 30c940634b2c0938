import { admitHandshake, type Handshake, type LiveTool, type SurfaceCaps } from '../surface/admit.js';
import { ServerChannel, type ChannelLimits } from './channel.js';
import { listAllTools, listCatalogs } from './listing.js';
import type { Catalogs, ServedCatalogs } from '../surface/catalog.js';
import type { Readable, Writable } from 'node:stream';

// An out-of-band fetch of a server's surface (lock, verify, diff, pin): the classic flow, initialize offering
// a given revision, `initialized`, then every page of tools/list. It is fetched twice when `capabilities` are
// given: once as a client with no capabilities and once as a client with them, so that tools a server only
// offers to capable clients are known as such (server-everything registers six more for roots, sampling and
// elicitation) and never read as drift when a client without them connects.

export const DEFAULT_OFFERED = '2025-11-25';
export const FULL_CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: {} };

export interface FetchedSurface {
  handshake: Handshake;
  tools: LiveTool[];
  catalogs: Catalogs;
  /** Names of tools listed only when the client offered capabilities. */
  conditional: string[];
}

export interface ServerStreams {
  serverIn: Writable;
  serverOut: Readable;
  /** Throws when the server process no longer runs the verified program (see ServerChannel). */
  verifyWriter?: () => void;
}

/** Who the warden says it is out of band: the revision it offers and a client identity that is not its own
 *  (the one last seen in band for the server; docs/adr/0012). */
export interface OutOfBandClient {
  offered: string;
  clientInfo: { name: string; version: string };
}

/**
 * The answer an SDK `Client` gives to a request of the server's, byte for byte (its member order, its words):
 * `ping` answered `{}`, `roots/list` an empty list when roots were declared, anything else "Method not found".
 * The warden's out-of-band session must not be told from a client's by how it answers (docs/adr/0012).
 */
export function answerAsSdkClient(method: string, id: string, capabilities: Record<string, unknown>): string {
  if (method === 'ping') return `{"result":{},"jsonrpc":"2.0","id":${id}}\n`;
  if (method === 'roots/list' && capabilities.roots !== undefined) return `{"result":{"roots":[]},"jsonrpc":"2.0","id":${id}}\n`;
  return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"Method not found"}}\n`;
}

/** Opens a classic session as a client of the server (initialize, initialized), answering its requests as a
 * client with no roots would. */
export async function openAsClient(io: ServerStreams, client: OutOfBandClient, capabilities: Record<string, unknown>, caps: SurfaceCaps, limits: ChannelLimits, onNoise: (reason: string) => void): Promise<{ channel: ServerChannel; handshake: Handshake }> {
  let channel: ServerChannel;
  channel = new ServerChannel(io.serverIn, io.serverOut, limits, {
    message: (msg) => {
      if (msg.kind === 'request') channel.write(answerAsSdkClient(msg.method, msg.id, capabilities));
    },
    answer: () => {}, // the warden is the only client here: every answer is its own
    refused: (_reason, detail) => onNoise(detail),
    noise: (_b, reason) => onNoise(reason),
    inadmissible: () => {},
    oversize: () => {},
    unverified: () => {}, // the waiting request fails with the reason
    end: () => {},
  }, { verifyWriter: io.verifyWriter });
  const result = await channel.request('initialize', { protocolVersion: client.offered, capabilities, clientInfo: client.clientInfo });
  const handshake = admitHandshake(result, caps);
  channel.notify('notifications/initialized');
  return { channel, handshake };
}

/** Fetches the surface once over an open server; `keep`: the session stays open, for the caller to go on and end. */
export async function fetchOnce(io: ServerStreams, client: OutOfBandClient, capabilities: Record<string, unknown>, caps: SurfaceCaps, limits: ChannelLimits, onNoise: (reason: string) => void, keep = false): Promise<{ channel: ServerChannel; handshake: Handshake; tools: LiveTool[]; catalogs: Catalogs; servedCatalogs: ServedCatalogs; pageMembers: string[] }> {
  const { channel, handshake } = await openAsClient(io, client, capabilities, caps, limits, onNoise);
  const pageMembers: string[] = [];
  const tools = await listAllTools(channel, caps, pageMembers);
  const servedCatalogs: ServedCatalogs = {};
  const catalogs = await listCatalogs(channel, handshake, caps, pageMembers, servedCatalogs);
  if (!keep) channel.end();
  return { channel, handshake, tools, catalogs, servedCatalogs, pageMembers };
}
