import type { CatalogKind, Catalogs } from './catalog.js';
import { READ_MATCH_STEPS, unmatchableUri, uriTemplateMatcher, type MatchBudget, type UriMatcher } from './uri-template.js';

// Which prompts/get and resources/read a session admits: an allow set, filled only from the warden's own listing
// of the session (at the handshake) and only with items whose digest equals the locked one (in monitor: every
// item that listing showed, the changed ones reported). A read of anything else is refused: an item the listing
// did not show (a capability left out, a listing answered empty), one that changed or appeared since the lock
// (enforce), and every read of a session with no listing. A resource URI is admitted when it is a listed
// resource's URI exactly, or one an admitted template expands to (uri-template.ts) when neither the listing
// refused that URI as a resource nor a refused template expands to it too (review 14). The client's own catalog
// pages only take away: an item they show that does not match the lock leaves the allow set (enforce).
// A read through templates is bounded in work, not only per template (review 26): a listing of more than
// MAX_TEMPLATES templates admits no read through any of them, and one read spends at most READ_MATCH_STEPS
// matcher steps over every template it walks; beyond either it is refused ('unbounded': fail closed). Matchers
// are compiled at a template's first use, not when it is listed.

type Kind = CatalogKind['kind'];
const KINDS: readonly Kind[] = ['prompts', 'resources', 'resourceTemplates'];

/** Why a read is refused, or that it is admitted. */
export type ReadVerdict = 'admitted' | 'changed' | 'unlisted' | 'unbounded' | 'not_canonical';

/** Whether a URI names, as a server parsing it as a URL names it, another string than itself (review 28): dot
 *  segments and `%2e%2e` removed, the scheme lower-cased, a default port dropped. Such a URI could name a resource
 *  the warden refused while matching an admitted template as written, so it is refused whatever it names. A URI
 *  `new URL` cannot parse is judged as written. */
function notCanonical(uri: string): boolean {
  if (!URL.canParse(uri)) return false;
  return new URL(uri).href !== uri;
}

/** The most resource templates a listing may hold for reads through them to be decided. Servers list a handful
 *  (the SDKs' examples and the reference servers: 0 to 5); 256 leaves fifty times that, and bounds the walk of a
 *  read to 256 templates whatever their size. */
export const MAX_TEMPLATES = 256;

export class ReadAdmission {
  private readonly admitted = new Map<Kind, Set<string>>(KINDS.map((k) => [k, new Set<string>()]));
  private readonly changed = new Map<Kind, Set<string>>(KINDS.map((k) => [k, new Set<string>()]));
  private readonly matchers = { admitted: new Map<string, UriMatcher>(), changed: new Map<string, UriMatcher>() };

  constructor(
    private readonly locked: Catalogs | undefined,
    private readonly enforce: boolean,
  ) {}

  /** Whether an item with this digest is what the lock holds under its id. */
  matchesLock(kind: Kind, id: string, digest: string): boolean {
    const locked = this.locked?.[kind];
    return locked !== undefined && Object.hasOwn(locked, id) && locked[id] === digest;
  }

  /** The warden's own listing: the only source of admitted items. A later one (a re-listing) decides the set
   *  again: what it no longer shows or shows changed leaves the allow set, and what was once refused stays
   *  refused for the session. */
  listed(live: Catalogs): void {
    for (const kind of KINDS) {
      const now = live[kind] ?? {};
      const admitted = this.admitted.get(kind) as Set<string>;
      const changed = this.changed.get(kind) as Set<string>;
      for (const id of [...admitted]) if (!Object.hasOwn(now, id)) admitted.delete(id);
      for (const [id, digest] of Object.entries(now)) {
        if ((this.matchesLock(kind, id, digest) || !this.enforce) && !changed.has(id)) admitted.add(id);
        else {
          admitted.delete(id);
          changed.add(id);
        }
      }
    }
  }

  /** An item of a client's catalog page: whether it may be shown. One that does not match the lock is not
   *  shown, and not admitted from now on (enforce); in monitor it is shown, and admitted only if listed. */
  pageItem(kind: Kind, id: string, digest: string): boolean {
    if (this.matchesLock(kind, id, digest) || !this.enforce) return true;
    if (this.admitted.get(kind)?.delete(id)) this.changed.get(kind)?.add(id);
    return false;
  }

  /** The verdict on getting a prompt (by name) or reading a resource (by URI). The listing's verdict on an item
   *  itself decides first, both ways: a URI the listing refused (changed or added since the lock) is not read
   *  through a template that covers it. A URI no listed resource names is admitted through a template only when
   *  no template the listing refused covers it too (the changed one may be the one describing it). A URI that
   *  would be admitted is refused when it is not its own URL serialization (notCanonical). */
  read(kind: 'prompts' | 'resources', item: string): ReadVerdict {
    const verdict = this.judged(kind, item);
    return verdict === 'admitted' && kind === 'resources' && notCanonical(item) ? 'not_canonical' : verdict;
  }

  private judged(kind: 'prompts' | 'resources', item: string): ReadVerdict {
    if (this.changed.get(kind)?.has(item)) return 'changed';
    if (this.admitted.get(kind)?.has(item)) return 'admitted';
    if (kind === 'prompts' || unmatchableUri(item)) return 'unlisted';
    const walked = (this.admitted.get('resourceTemplates')?.size ?? 0) + (this.changed.get('resourceTemplates')?.size ?? 0);
    if (walked > MAX_TEMPLATES) return 'unbounded'; // every template listed is admitted or refused: both are walked
    const budget: MatchBudget = { steps: READ_MATCH_STEPS };
    const changed = this.throughTemplate('changed', item, budget);
    if (changed !== false) return changed === 'over' ? 'unbounded' : 'changed';
    const admitted = this.throughTemplate('admitted', item, budget);
    if (admitted !== false) return admitted === 'over' ? 'unbounded' : 'admitted';
    return 'unlisted';
  }

  /** The verdict on completing an argument of a prompt (by name) or a resource (by the template's text, or a URI:
   *  a template the listing refused or admitted decides by its own verdict, any other URI as a read of it). */
  completion(kind: 'prompts' | 'resources', item: string): ReadVerdict {
    if (kind === 'resources' && this.changed.get('resourceTemplates')?.has(item)) return 'changed';
    if (kind === 'resources' && this.admitted.get('resourceTemplates')?.has(item)) return 'admitted';
    return this.read(kind, item);
  }

  /** Whether a template of the set expands to the URI; 'over' when the budget ran out first. A refused template
   *  is matched laxly (uri-template.ts): any run of characters for each expression. */
  private throughTemplate(set: 'admitted' | 'changed', uri: string, budget: MatchBudget): boolean | 'over' {
    for (const id of (set === 'admitted' ? this.admitted : this.changed).get('resourceTemplates') ?? []) {
      let matcher = this.matchers[set].get(id);
      if (!matcher) this.matchers[set].set(id, (matcher = uriTemplateMatcher(id, set === 'changed')));
      const found = matcher(uri, budget);
      if (found !== false) return found;
    }
    return false;
  }
}
