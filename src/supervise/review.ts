import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import { liveSurfaceHash, type LockEntry } from '../surface/lockfile.js';
import { catalogsHash } from '../surface/warden-lock.js';
import { clearReview, loadReview, saveReview, type Review } from '../store/review.js';
import type { HomePaths } from '../store/paths.js';
import type { Fetched } from './surface-fetch.js';

// `pin` accepts what `diff` showed, and nothing else (docs/adr/0054, issue 26's sixth closing review): `diff`
// records the digests of every part of the surface it fetched and showed (tools exactly, the initialize result's
// prints, the instructions, the catalogs, the conditional tools); `pin` launches the server again and locks only
// when what it fetched is equal to that review, part by part (`pin --tool NAME`: that tool). A server that serves
// the review one thing and the pin another is refused, never locked unseen.

type Fetch = Pick<Fetched, 'handshake' | 'tools' | 'handshakes' | 'catalogs' | 'conditional'> & Partial<Pick<Fetched, 'classic'>>;

export function reviewOf(fetched: Fetch, locked: LockEntry): Review {
  const tools = Object.create(null) as Record<string, string>;
  for (const t of fetched.tools) tools[t.name] = t.print.hExact;
  return {
    lockedSurfaceHash: locked.surface_hash,
    at: new Date().toISOString(),
    surface: liveSurfaceHash(fetched.handshake, fetched.tools),
    tools,
    handshakes: fetched.handshakes.map((h) => h.hExact),
    ...(fetched.classic ? { classicHandshakes: fetched.classic.prints.map((h) => h.hExact) } : {}),
    catalogs: catalogsHash(fetched.catalogs),
    conditional: [...fetched.conditional].sort(),
  };
}

/** Records what `diff` showed (called by diff only). */
export function recordReview(paths: HomePaths, id: string, review: Review): void {
  saveReview(paths, id, review);
}

/** The part of a fresh fetch that differs from the review (for `pin --tool NAME`: that tool only), or undefined. */
function differs(review: Review, now: Review, tool: string | undefined): string | undefined {
  if (tool !== undefined) return review.tools[tool] === now.tools[tool] ? undefined : `tool "${printable(tool)}"`;
  if (review.handshakes.join() !== now.handshakes.join()) return 'the initialize result';
  if ((review.classicHandshakes ?? []).join() !== (now.classicHandshakes ?? []).join()) return 'the initialize result served to 2025 clients';
  if (review.surface !== now.surface) {
    const changed = Object.keys({ ...review.tools, ...now.tools }).filter((n) => review.tools[n] !== now.tools[n]);
    return changed.length ? `tool "${printable(changed[0] as string)}"${changed.length > 1 ? ` and ${changed.length - 1} more` : ''}` : 'the instructions or the revision';
  }
  if (Object.keys({ ...review.tools, ...now.tools }).some((n) => review.tools[n] !== now.tools[n])) return 'a tool';
  if (review.catalogs !== now.catalogs) return 'the prompts, resources or templates';
  if (review.conditional.join('\n') !== now.conditional.join('\n')) return 'the tools offered only to clients with capabilities';
  return undefined;
}

/** Who showed the review and what to do again, for the refusal: `pin` after `diff`, or an upgrade (which shows
 *  the new version's diff and then locks it, on launches of its own). */
export interface ReviewWords {
  taken: string;
  shown: string;
  again: string;
}

const pinWords = (id: string): ReviewWords => ({ taken: 'nothing was pinned', shown: `'mcp-warden diff ${id}' showed`, again: `Run 'mcp-warden diff ${id}', read what it shows, then pin again.` });

/** Refuses a pin that would lock anything `diff` did not show; on success the review is used up. */
export function requireReviewed(paths: HomePaths, id: string, locked: LockEntry, fetched: Fetch, tool?: string, said: ReviewWords = pinWords(id)): () => void {
  const review = loadReview(paths, id);
  if (!review || review.lockedSurfaceHash !== locked.surface_hash) {
    throw new WardenError('SURFACE_NOT_REVIEWED', `${said.taken} for server '${id}': what is locked must be what ${said.shown}, and ${review ? 'the lock changed since then' : 'nothing shown was recorded since the last pin'}. ${said.again}`);
  }
  const what = differs(review, reviewOf(fetched, locked), tool);
  if (what !== undefined) {
    throw new WardenError('SURFACE_NOT_REVIEWED', `${said.taken} for server '${id}': what it serves now differs from what ${said.shown} at ${review.at} (${what}). A server that serves one launch differently from the next deserves a closer look. ${said.again}`);
  }
  return () => clearReview(paths, id);
}
