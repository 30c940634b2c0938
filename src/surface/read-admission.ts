import type { CatalogKind, Catalogs } from './catalog.js';
import { uriTemplateMatcher } from './uri-template.js';

// Which prompts/get and resources/read a session admits: an allow set, filled only from the warden's own listing
// of the session (at the handshake) and only with items whose digest equals the locked one (in monitor: every
// item that listing showed, the changed ones reported). A read of anything else is refused: an item the listing
// did not show (a capability left out, a listing answered empty), one that changed or appeared since the lock
// (enforce), and every read of a session with no listing. A resource URI is admitted when it is a listed
// resource's URI exactly, or one an admitted template expands to (uri-template.ts) when neither the listing
// refused that URI as a resource nor a refused template expands to it too (review 14). The client's own catalog
// pages only take away: an item they show that does not match the lock leaves the allow set (enforce).

type Kind = CatalogKind['kind'];
const KINDS: readonly Kind[] = ['prompts', 'resources', 'resourceTemplates'];

/** Why a read is refused, or that it is admitted. */
export type ReadVerdict = 'admitted' | 'changed' | 'unlisted';

export class ReadAdmission {
  private readonly admitted = new Map<Kind, Set<string>>(KINDS.map((k) => [k, new Set<string>()]));
  private readonly changed = new Map<Kind, Set<string>>(KINDS.map((k) => [k, new Set<string>()]));
  private readonly matchers = new Map<string, (uri: string) => boolean>();

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
        if (kind === 'resourceTemplates') this.matchers.set(id, uriTemplateMatcher(id));
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
   *  no template the listing refused covers it too (the changed one may be the one describing it). */
  read(kind: 'prompts' | 'resources', item: string): ReadVerdict {
    if (this.changed.get(kind)?.has(item)) return 'changed';
    if (this.admitted.get(kind)?.has(item)) return 'admitted';
    if (kind === 'resources' && this.throughTemplate('changed', item)) return 'changed';
    if (kind === 'resources' && this.throughTemplate('admitted', item)) return 'admitted';
    return 'unlisted';
  }

  private throughTemplate(set: 'admitted' | 'changed', uri: string): boolean {
    for (const id of (set === 'admitted' ? this.admitted : this.changed).get('resourceTemplates') ?? []) {
      if (this.matchers.get(id)?.(uri)) return true;
    }
    return false;
  }
}
