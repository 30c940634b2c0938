import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';

// The era of a connection (docs/adr/0044-modern-era.md, recommendation 1), decided from the client's messages by
// the body-primary rule of the SDK's serveStdio, so that the warden never judges one protocol while the server
// speaks another: a message whose params._meta carries the protocol-version key claims revision 2026-07-28's
// per-request envelope ("modern"); a claim-less one is 2025 traffic ("classic"), initialize included; a claim
// that names a revision the warden does not judge, or an envelope without its required members, is refused.
// A first server/discover opens a probe (the client may still fall back to initialize on the same connection,
// as serveStdio allows); any other modern message pins the modern era, any claim-less one the classic era.

export const MODERN_REVISION = '2026-07-28';
export const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';

/** JSON-RPC codes of revision 2026-07-28 the warden answers with. */
export const INVALID_PARAMS = -32602;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export type Era = 'undecided' | 'probe' | 'classic' | 'modern';

/** How a client message stands against the modern envelope. */
export type Claim =
  | { kind: 'none' }
  | { kind: 'modern'; meta: JsonObject }
  | { kind: 'invalid'; key: string; problem: string }
  | { kind: 'unsupported'; requested: string };

const isObject = (v: JsonValue | undefined): v is JsonObject => v instanceof Map;

/** Reads the envelope claim of a message's params. */
export function envelopeClaim(params: JsonValue | undefined): Claim {
  const meta = isObject(params) ? params.get('_meta') : undefined;
  if (!isObject(meta) || !meta.has(VERSION_KEY)) return { kind: 'none' };
  const version = meta.get(VERSION_KEY);
  if (typeof version !== 'string') return { kind: 'invalid', key: VERSION_KEY, problem: 'not a string' };
  if (version !== MODERN_REVISION) return { kind: 'unsupported', requested: version };
  if (!isObject(meta.get(CLIENT_CAPABILITIES_KEY))) return { kind: 'invalid', key: CLIENT_CAPABILITIES_KEY, problem: meta.has(CLIENT_CAPABILITIES_KEY) ? 'not an object' : 'missing' };
  const info = meta.get(CLIENT_INFO_KEY);
  if (info !== undefined && !(isObject(info) && typeof info.get('name') === 'string' && typeof info.get('version') === 'string')) return { kind: 'invalid', key: CLIENT_INFO_KEY, problem: 'not an object with a string name and version' };
  return { kind: 'modern', meta };
}

/** The era a connection moves to on a client message (request or notification) of this claim and method. */
export function nextEra(era: Era, claim: Claim, method: string): Era {
  if (era === 'classic' || era === 'modern') return era;
  if (claim.kind === 'none') return 'classic';
  if (claim.kind !== 'modern') return era; // refused; the era stays open
  return method === 'server/discover' ? 'probe' : 'modern';
}

/** The `_meta` of a request's params as JSON text, without the progress token (it names one request of the
 *  client's); undefined when there is none. */
export function envelopeText(value: JsonObject): string | undefined {
  const params = value.get('params');
  const meta = params instanceof Map ? params.get('_meta') : undefined;
  if (!(meta instanceof Map)) return undefined;
  return serialize(new Map([...meta].filter(([k]) => k !== 'progressToken')));
}
