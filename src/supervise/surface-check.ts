import { WardenError } from '../error.js';
import type { JsonObject } from '../protocol/json/reader.js';
import type { Handshake, LiveTool } from '../surface/admit.js';
import { diffSurface, worstClass, type SurfaceDiff } from '../surface/diff.js';
import { lockedExtra } from '../surface/warden-lock.js';
import { handshakeDriftByForm, type HandshakeDrift } from '../surface/handshake-print.js';
import type { WardenLockEntry } from '../surface/warden-lock.js';
import type { Fetched } from './surface-fetch.js';
import { liveSurfaceHash, type LockEntry } from '../surface/lockfile.js';
import { diffCatalogs, type CatalogChange, type ServedCatalogs } from '../surface/catalog.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { fetchSurface } from './surface-fetch.js';
import { escaped } from '../escape.js';
import type { ScanResult } from '../scan/surface.js';
import { scanServed } from './surface-scan.js';
import { reviewOf } from './review.js';
import type { Review } from '../store/review.js';

// Checking a server's surface out of band, for `verify`, `diff` and the daemon's scheduled verification: a fresh
// attested launch, the served surface diffed against tools.lock and warden.lock.

const say = (m: string): void => void process.stderr.write(`mcp-warden: ${escaped(m)}\n`);

/** What checking a server's served surface against its lock found (an error is a result, not a throw). */
export interface SurfaceCheck {
  id: string;
  status: 'ok' | 'drift' | 'error';
  worst?: string;
  diff?: SurfaceDiff;
  catalogs?: CatalogChange[];
  error?: { code: string; message: string; exitCode: number };
  live?: LiveTool[];
  entry?: LockEntry;
  liveInstructions?: string | undefined;
  /** The served members of the initialize result the handshake print covers (shown by `diff` when changed). */
  liveHandshake?: JsonObject;
  /** The same, as served to a client offering no capabilities, when it differs. */
  liveBareHandshake?: JsonObject;
  /** A hybrid's classic initialize result as served to a 2025 client offering capabilities and, when it differs,
   *  to one offering none (docs/adr/0055). */
  liveClassicHandshake?: JsonObject;
  liveClassicBareHandshake?: JsonObject;
  /** The changed and added prompts, resources and templates as served, their JSON text (shown by `diff`). */
  liveCatalogItems?: ServedCatalogs;
  liveSurfaceHash?: string;
  /** "METHOD member" for each member of a listing result beside its items and cursor: nothing locks them, and a
   *  session does not relay them. */
  pageMembers?: string[];
  /** The first-trust scan of what changed (changed and added tools, changed instructions, initialize result and
   *  catalog items): what a pin would accept (issue 30). */
  findings?: ScanResult;
  /** The digests of what was fetched, for `diff` to record as what it showed (review.ts). */
  review?: Review;
}

/** Launches server `id` (twice: with and without client capabilities) and compares what it serves with its lock.
 *  `review` (diff): what is fetched is what a pin takes, so a stateless server's classic answer is fetched even
 *  when the lock holds no print of it (verify and the daemon fetch it only when it does: docs/adr/0055). */
export async function checkSurface(paths: HomePaths, id: string, opts: { review?: boolean } = {}): Promise<SurfaceCheck> {
  try {
    serverById(loadServers(paths), id, paths);
    const locks = loadLocks(paths);
    const entry = locks.tools.get(id);
    if (!entry) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
    const extra = locks.warden.get(id);
    const fetched = await fetchSurface(paths, id, entry.protocol, say, undefined, opts.review === true || extra?.classicHandshake !== undefined);
    // Out of band both forms of the initialize result are judged, each against its own locked print.
    // A hybrid's classic answer is judged against its own prints, each era against its own (docs/adr/0055).
    const diff = { ...diffSurface(entry, lockedExtra(extra), fetched.handshake, fetched.tools), handshake: bothEras(handshakeDriftByForm(extra?.handshake, fetched.handshake.print, fetched.bareHandshake.print), classicDrift(extra, fetched)) };
    const catalogs = extra ? diffCatalogs(extra.catalogs, fetched.catalogs) : [];
    const liveCatalogItems: ServedCatalogs = {};
    for (const c of catalogs) {
      const json = fetched.servedCatalogs[c.kind]?.[c.id];
      if (c.state !== 'removed' && json !== undefined) (liveCatalogItems[c.kind] ??= Object.create(null) as Record<string, string>)[c.id] = json;
    }
    const pageMembers = fetched.pageMembers;
    const worst = worstClass(diff) ?? (diff.era ? 'era' : catalogs.length > 0 ? 'catalog' : pageMembers.length > 0 ? 'listing' : undefined);
    const hs = fetched.handshake;
    const changedTools = new Set(diff.tools.filter((t) => t.state === 'changed' || t.state === 'added').map((t) => t.name));
    const changedInitialize = diff.handshake.state !== 'matched';
    // What a pin would lock, where it differs from the lock: every form of the initialize result when one changed.
    const shown = (form: Handshake): Handshake => ({ ...form, members: changedInitialize ? form.members : new Map(), instructions: diff.instructionsChanged ? form.instructions : undefined });
    const findings = scanServed(paths, id, {
      handshake: shown(hs),
      ...(changedInitialize ? { bareHandshake: shown(fetched.bareHandshake), ...(fetched.classic ? { classic: { full: shown(fetched.classic.full), bare: shown(fetched.classic.bare) } } : {}) } : {}),
      tools: fetched.tools.filter((t) => changedTools.has(t.name)),
      servedCatalogs: liveCatalogItems,
    });
    return { id, status: worst ? 'drift' : 'ok', ...(worst ? { worst } : {}), diff, catalogs, pageMembers, findings, review: reviewOf(fetched, entry), live: fetched.tools, entry, liveInstructions: hs.instructions, liveHandshake: hs.members, ...(fetched.bareHandshake.print.hExact !== hs.print.hExact ? { liveBareHandshake: fetched.bareHandshake.members } : {}), liveCatalogItems, ...classicMembers(fetched), liveSurfaceHash: liveSurfaceHash(hs, fetched.tools) };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { id, status: 'error', error: { code: err.code, message: err.message, exitCode: err.exitCode } };
  }
}

/** The classic answer of a server whose lock holds its prints, against them: a server that no longer answers a
 *  2025 initialize has changed every member it was locked with. Without classic prints (a server of one era, an
 *  entry taken before docs/adr/0055), nothing: sessions of both eras are judged against the one print, as before. */
function classicDrift(extra: WardenLockEntry | undefined, fetched: Fetched): HandshakeDrift | undefined {
  const locked = extra?.classicHandshake;
  if (!locked) return undefined;
  if (!fetched.classic) return { state: 'changed', fields: Object.keys(locked[0]?.fields ?? {}).sort() };
  return handshakeDriftByForm(locked, fetched.classic.full.print, fetched.classic.bare.print);
}

function bothEras(stateless: HandshakeDrift, classic: HandshakeDrift | undefined): HandshakeDrift {
  if (!classic || classic.state === 'matched') return stateless;
  if (stateless.state === 'unlocked') return stateless;
  return { state: 'changed', fields: [...new Set([...stateless.fields, ...classic.fields])].sort() };
}

function classicMembers(fetched: Fetched): Pick<SurfaceCheck, 'liveClassicHandshake' | 'liveClassicBareHandshake'> {
  const c = fetched.classic;
  if (!c) return {};
  return { liveClassicHandshake: c.full.members, ...(c.bare.print.hExact !== c.full.print.hExact ? { liveClassicBareHandshake: c.bare.members } : {}) };
}
