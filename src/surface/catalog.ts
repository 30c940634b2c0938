import { CanonicalError } from '../protocol/json/canonical.js';
import type { JsonObject, JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import { toolDigests } from './print.js';
import { InadmissibleError, printable, refuseCaseVariants, refuseDescriptionVariants, type SurfaceCaps } from './admit.js';

// Prompts, resources and resource templates: the rest of what a server tells the model (prompt text,
// resource descriptions). Beyond tools.lock v1, the warden digests each item (exact canonical form) and keeps
// the digests and a rollup in warden.lock; drift is reported like tool drift.

export interface CatalogKind {
  kind: 'prompts' | 'resources' | 'resourceTemplates';
  method: string;
  /** The result key holding the items, and the item key that names one. */
  key: string;
  id: string;
  /** The server capability that advertises it. */
  capability: 'prompts' | 'resources';
}

/** The members of an item a client reads (schema 2025-11-25 Prompt, Resource, ResourceTemplate, PromptArgument,
 *  Annotations): another spelling of one is refused (review 26), as a tool's are (admit.ts), and "description"
 *  at any depth. */
const ITEM_MEMBERS: Record<CatalogKind['kind'], readonly string[]> = {
  prompts: ['name', 'title', 'description', 'arguments', 'icons'],
  resources: ['uri', 'name', 'title', 'description', 'mimeType', 'size', 'annotations', 'icons'],
  resourceTemplates: ['uriTemplate', 'name', 'title', 'description', 'mimeType', 'annotations', 'icons'],
};
const ARGUMENT_MEMBERS = ['name', 'title', 'description', 'required'];
const ANNOTATION_MEMBERS = ['audience', 'priority', 'lastModified'];
const SINGULAR: Record<CatalogKind['kind'], string> = { prompts: 'prompt', resources: 'resource', resourceTemplates: 'resource template' };

/** Refuses an item carrying another spelling of a member a client reads, at its top, in a prompt's arguments, in
 *  its annotations, and "description" anywhere. */
function refuseItemVariants(kind: CatalogKind, item: JsonObject, id: string): void {
  const where = (): string => `${SINGULAR[kind.kind]} "${printable(id)}" in ${kind.method}`;
  refuseCaseVariants(item, ITEM_MEMBERS[kind.kind], where);
  const args = kind.kind === 'prompts' ? item.get('arguments') : undefined;
  if (Array.isArray(args)) for (const a of args) if (a instanceof Map) refuseCaseVariants(a, ARGUMENT_MEMBERS, where);
  const annotations = item.get('annotations');
  if (annotations instanceof Map) refuseCaseVariants(annotations, ANNOTATION_MEMBERS, where);
  refuseDescriptionVariants(item, where);
}

export const CATALOGS: CatalogKind[] = [
  { kind: 'prompts', method: 'prompts/list', key: 'prompts', id: 'name', capability: 'prompts' },
  { kind: 'resources', method: 'resources/list', key: 'resources', id: 'uri', capability: 'resources' },
  { kind: 'resourceTemplates', method: 'resources/templates/list', key: 'resourceTemplates', id: 'uriTemplate', capability: 'resources' },
];

/** Item id -> exact digest. */
export type CatalogDigests = Record<string, string>;

/** Item id -> the item as served, its JSON text (serialize: member order and number lexemes as they arrived).
 *  Kept by the out-of-band fetch only, for `diff` to show what a pin would accept. */
export type ServedItems = Record<string, string>;
export type ServedCatalogs = Partial<Record<CatalogKind['kind'], ServedItems>>;

export class CatalogAdmitter {
  // No prototype: an item may be named "__proto__" or "constructor" (a hostile server names its prompts).
  readonly items: CatalogDigests = Object.create(null) as CatalogDigests;
  /** Members of the pages' results beside the items and "nextCursor" (names, up to 16): nothing locks them. */
  readonly otherMembers = new Set<string>();
  /** The items as served, when asked to keep them (out of band); a session keeps digests only. */
  readonly served: ServedItems | undefined;
  private servedBytes = 0;
  private readonly cursors = new Set<string>();
  private pages = 0;
  private count = 0;

  constructor(
    private readonly k: CatalogKind,
    private readonly caps: SurfaceCaps,
    keepServed = false,
  ) {
    if (keepServed) this.served = Object.create(null) as ServedItems;
  }

  /** Admits one page; returns the next cursor, or undefined when complete. */
  page(result: JsonValue | undefined): string | undefined {
    const what = `a ${this.k.method} result`;
    if (++this.pages > this.caps.maxPages) throw new InadmissibleError(`${this.k.method} has more than ${this.caps.maxPages} pages`);
    if (!(result instanceof Map)) throw new InadmissibleError(`${what} is not a JSON object`);
    refuseCaseVariants(result, [this.k.key, 'nextCursor'], what);
    for (const m of result.keys()) if (m !== this.k.key && m !== 'nextCursor' && this.otherMembers.size < 16) this.otherMembers.add(m);
    const items = result.get(this.k.key);
    if (!Array.isArray(items)) throw new InadmissibleError(`${what} has no "${this.k.key}" array`);
    for (const item of items) {
      if (!(item instanceof Map)) throw new InadmissibleError(`an item of ${what} is not an object`);
      const id = item.get(this.k.id);
      if (typeof id !== 'string' || id.length === 0) throw new InadmissibleError(`an item of ${what} has no string "${this.k.id}"`);
      refuseItemVariants(this.k, item, id);
      if (Object.hasOwn(this.items, id)) throw new InadmissibleError(`${this.k.method} names "${printable(id)}" twice`);
      if (++this.count > this.caps.maxTools) throw new InadmissibleError(`${this.k.method} has more than ${this.caps.maxTools} items`);
      try {
        this.items[id] = toolDigests(item).hExact;
      } catch (err) {
        if (err instanceof CanonicalError) throw new InadmissibleError(`"${printable(id)}" in ${this.k.method} cannot be canonicalized: ${err.message}`);
        throw err;
      }
      if (this.served) this.keep(id, item);
    }
    const next = result.get('nextCursor');
    if (next === undefined || next === null) return undefined;
    if (typeof next !== 'string' || Buffer.byteLength(next) > this.caps.maxCursorBytes) throw new InadmissibleError(`${this.k.method} returned an invalid cursor`);
    if (this.cursors.has(next)) throw new InadmissibleError(`${this.k.method} repeated a cursor (a pagination loop)`);
    this.cursors.add(next);
    return next;
  }

  /** Keeps an item's text whole (a review is never cut), the whole listing bounded like a tool surface. */
  private keep(id: string, item: JsonValue): void {
    const json = serialize(item);
    this.servedBytes += Buffer.byteLength(json);
    if (this.servedBytes > this.caps.maxSurfaceBytes) throw new InadmissibleError(`${this.k.method} lists more than ${this.caps.maxSurfaceBytes} bytes of items, more than can be kept for review`);
    (this.served as ServedItems)[id] = json;
  }
}

export type Catalogs = Partial<Record<CatalogKind['kind'], CatalogDigests>>;

export interface CatalogChange {
  kind: CatalogKind['kind'];
  id: string;
  state: 'changed' | 'added' | 'removed';
}

/** Differences between locked and live catalogs (only kinds present on both sides are compared). */
export function diffCatalogs(locked: Catalogs | undefined, live: Catalogs): CatalogChange[] {
  const out: CatalogChange[] = [];
  for (const { kind } of CATALOGS) {
    const a = locked?.[kind];
    const b = live[kind];
    if (!a && !b) continue;
    const was = a ?? {};
    const now = b ?? {};
    for (const id of Object.keys(was).sort()) {
      if (!Object.hasOwn(now, id)) out.push({ kind, id, state: 'removed' });
      else if (was[id] !== now[id]) out.push({ kind, id, state: 'changed' });
    }
    for (const id of Object.keys(now).sort()) if (!Object.hasOwn(was, id)) out.push({ kind, id, state: 'added' });
  }
  return out;
}
