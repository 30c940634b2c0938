import { foldsAlike } from '../protocol/fold.js';
import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { DEFAULT_CAPS, InadmissibleError, admitHandshake, refuseCaseVariants, type Handshake, type SurfaceCaps } from './admit.js';
import { printable } from '../escape.js';

// A server/discover result (revision 2026-07-28) read as the surface an initialize result carries, so one lock
// entry judges both eras (docs/adr/0044-modern-era.md, recommendation 5). The mapping is enumerated and exact:
//   capabilities, instructions             the same members
//   _meta["io.modelcontextprotocol/serverInfo"]   serverInfo (the rest of _meta stays _meta)
//   supportedVersions, resultType, ttlMs, cacheScope   negotiation and caching, not surface
//   any other member                       itself, judged in the print like an unknown initialize member
// A discover result that carries an initialize result's own `protocolVersion` or `serverInfo` is refused: it would
// be read one way by the warden and another by a client. So is one whose top-level members, or whose `_meta`'s,
// hold another spelling of a name the warden reads in a result (proxy/result-fold.ts, which a discover answer
// does not reach) or two names folding alike (protocol/fold.ts): a client matching names ignoring case and
// keeping the last reads the second, the warden judged the first (review 20).

export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';
const NEGOTIATION = ['supportedVersions', 'resultType', 'ttlMs', 'cacheScope'];
const INITIALIZE_ONLY = ['protocolVersion', 'serverInfo'];
const DISCOVER_KEYS = [...NEGOTIATION, 'capabilities', 'instructions', '_meta', ...INITIALIZE_ONLY, 'inputRequests', 'requestState'];
/** What the warden reads of a result's `_meta` (proxy/era.ts SUBSCRIPTION_KEY, which surface/ does not import). */
const META_KEYS = [SERVER_INFO_META, 'io.modelcontextprotocol/subscriptionId'];

/** Refuses an object holding two members that fold alike. */
function refuseFoldingAlike(obj: JsonObject, where: string): void {
  const two = foldsAlike(obj.keys());
  if (two) throw new InadmissibleError(`${where} carries "${printable(two.key)}" and "${printable(two.name)}", which a client reading names without regard to case takes for one`);
}
/** Revisions a discover may list, and bytes of one. */
const MAX_VERSIONS = 64;
const MAX_VERSION_BYTES = 64;
const REVISION = /^\d{4}-\d{2}-\d{2}$/;

export interface Discovered {
  /** The surface, as an initialize result under `era` would carry it. */
  handshake: Handshake;
  /** The revisions the server says it supports. */
  supportedVersions: string[];
}

/** Reads a server/discover result for a session (or a lock) of revision `era`. Throws InadmissibleError. */
export function admitDiscover(result: JsonValue | undefined, era: string, caps: SurfaceCaps = DEFAULT_CAPS): Discovered {
  if (!(result instanceof Map)) throw new InadmissibleError('the server/discover result is not a JSON object');
  refuseCaseVariants(result, DISCOVER_KEYS, 'the server/discover result');
  refuseFoldingAlike(result, 'the server/discover result');
  for (const k of INITIALIZE_ONLY) {
    if (result.has(k)) throw new InadmissibleError(`the server/discover result carries "${k}", a member of a 2025 initialize result`);
  }
  const versions = result.get('supportedVersions');
  if (!Array.isArray(versions) || versions.length === 0 || versions.length > MAX_VERSIONS || !versions.every((v) => typeof v === 'string' && Buffer.byteLength(v) <= MAX_VERSION_BYTES)) {
    throw new InadmissibleError(`"supportedVersions" of the server/discover result is not a list of 1 to ${MAX_VERSIONS} revisions`);
  }
  // The negotiation and caching members are not surface, so each must have the shape the revision gives it: a
  // value that could carry text would reach the client unjudged.
  if (!versions.every((v) => REVISION.test(v as string))) throw new InadmissibleError('"supportedVersions" of the server/discover result holds something that is not a revision date');
  const resultType = result.get('resultType');
  if (resultType !== undefined && resultType !== 'complete') throw new InadmissibleError('"resultType" of the server/discover result is not "complete"');
  const ttl = result.get('ttlMs');
  if (ttl !== undefined && !(ttl instanceof JsonNumber && /^\d{1,12}$/.test(ttl.lexeme))) throw new InadmissibleError('"ttlMs" of the server/discover result is not a whole number of milliseconds');
  const scope = result.get('cacheScope');
  if (scope !== undefined && scope !== 'public' && scope !== 'private') throw new InadmissibleError('"cacheScope" of the server/discover result is neither "public" nor "private"');
  const shaped: JsonObject = new Map([['protocolVersion', era]]);
  for (const [k, v] of result) {
    if (NEGOTIATION.includes(k)) continue;
    if (k !== '_meta') {
      shaped.set(k, v);
      continue;
    }
    if (!(v instanceof Map)) throw new InadmissibleError('"_meta" of the server/discover result is not an object');
    refuseCaseVariants(v, META_KEYS, 'the _meta of the server/discover result');
    refuseFoldingAlike(v, 'the _meta of the server/discover result');
    const info = v.get(SERVER_INFO_META);
    if (info !== undefined) shaped.set('serverInfo', info);
    const rest: JsonObject = new Map([...v].filter(([m]) => m !== SERVER_INFO_META));
    if (rest.size > 0) shaped.set('_meta', rest);
  }
  return { handshake: { ...admitHandshake(shaped, caps), stateless: true }, supportedVersions: versions as string[] };
}

/** Why a discover result does not confirm `era`, or undefined when it does. */
export function unconfirmed(d: Discovered, era: string): string | undefined {
  if (d.supportedVersions.includes(era)) return undefined;
  return `server/discover lists ${d.supportedVersions.map((v) => `"${printable(v)}"`).join(', ')}, not ${era}`;
}
