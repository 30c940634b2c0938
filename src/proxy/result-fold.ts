import { caseVariant, foldedNames, foldsAlike, type FoldedNames } from '../protocol/fold.js';
import type { JsonObject } from '../protocol/json/reader.js';
import { SERVER_INFO_META } from '../surface/discover.js';
import { SUBSCRIPTION_KEY } from './era.js';
import { shownName } from './client-refusals.js';

// A result on a 2026-07-28 connection whose member names one reader takes for another (review 20). The warden
// reads a result's `resultType`, `inputRequests`, `requestState` (an input_required answer: impersonation, its
// bounds) and `_meta` (the server's name it judges against the lock) by their exact names; a client that matches
// member names ignoring case and keeps the last (Go's encoding/json, the Go MCP SDKs: protocol/fold.ts, the one
// fold) reads `"ResultType": "input_required"` as an input_required answer, and of `_meta` then `_Meta` the
// second. So a result whose top-level members, or whose `_meta`'s members, hold another spelling of a name the
// warden reads, or two names that fold alike, is refused as a whole, never relayed.

/** What the warden reads at the top level of a 2026-07-28 result (the revision's own members with it). */
const RESULT_READ = foldedNames(['resultType', 'inputRequests', 'requestState', '_meta', 'ttlMs', 'cacheScope']);
/** What it reads of the result's `_meta`. */
const META_READ = foldedNames([SERVER_INFO_META, SUBSCRIPTION_KEY]);

function collision(keys: readonly string[], names: FoldedNames): { key: string; name: string } | undefined {
  return caseVariant(keys, names) ?? foldsAlike(keys);
}

/** Why a 2026-07-28 result is not relayed for its member names, or undefined when no two fold alike. */
export function foldRefusal(result: JsonObject): string | undefined {
  const top = collision([...result.keys()], RESULT_READ);
  if (top) return `its result carries "${shownName(top.key)}", which a client reading names without regard to case takes for "${shownName(top.name)}"`;
  const meta = result.get('_meta');
  const inMeta = meta instanceof Map ? collision([...meta.keys()], META_READ) : undefined;
  if (inMeta) return `its result's _meta carries "${shownName(inMeta.key)}", which a client reading names without regard to case takes for "${shownName(inMeta.name)}"`;
  return undefined;
}
