import type { AuditEvent, ToolChangeRecord } from '../audit/events.js';
import type { Handshake, LiveTool } from '../surface/admit.js';
import { diffSurface, type SurfaceDiff } from '../surface/diff.js';
import { catalogsHash, lockedExtra, type WardenLockEntry } from '../surface/warden-lock.js';
import { liveSurfaceHash, type LockEntry } from '../surface/lockfile.js';
import { decide, decideUnpinned, type Decisions, type Posture } from '../surface/posture.js';
import { diffCatalogs, type CatalogChange, type Catalogs } from '../surface/catalog.js';
import { printable } from '../surface/admit.js';
import { ReadAdmission } from '../surface/read-admission.js';

/** Changed tools (or catalog items) reported one line each; past that, one summary line with the counts. */
const REPORTED_LINES = 10;
/** Tier widenings audited and printed one by one in a session; past it, one line says that more are blocked
 *  without a report each (a server renaming its descriptions at every re-list made thousands: test/attack12). */
const WIDENINGS_REPORTED = 100;
/** Surfaces recorded after the handshake's in a session (each a `surface` event and an alert); past it, one line
 *  says that the surface keeps changing (a server flipping between two at every re-list made one a re-list). */
const SURFACES_RECORDED = 64;
/** Catalog drifts recorded in a session (each a `catalog_drift` event and an alert), the same bound as re-listed
 *  surfaces: on a 2026-07-28 connection each prompts or resources list change makes the warden judge the
 *  catalogs again, so a server that notifies and flips its catalogs chooses how often; past it, one
 *  `reports_capped` event and the rest judged as always, not recorded. */
const CATALOG_DRIFTS_RECORDED = SURFACES_RECORDED;
const count = (n: number): string => n.toLocaleString('en-US');

// Judging what this session was served against the lock: which tools the client may see and call. The
// approved set is the session's authority for tools/call. Audit records carry names, classes and field names,
// never the text.

export interface JudgeConfig {
  serverId: string;
  posture: Posture;
  entry: LockEntry | undefined;
  extra: WardenLockEntry | undefined;
  audit: (e: AuditEvent) => void;
  report: (message: string) => void;
}

export type ListingSource = 'handshake' | 'relist' | 'client_list';

export class SurfaceJudge {
  /** Tools the client may call on this session. */
  readonly approved = new Set<string>();
  /** Every tool of the last complete listing, approved or not. */
  readonly listed = new Set<string>();
  /** Which prompts/get and resources/read the client may send on this session: an allow set, filled from the
   *  warden's own catalog listing (judgeCatalogs) and nothing else. */
  readonly reads: ReadAdmission;
  private lastReported: string | undefined;
  private readonly wideningReported = new Set<string>();
  private wideningsCapped = false;
  private surfacesRecorded = 0;
  private surfacesCapped = false;
  /** The drifted catalogs recorded last, by digest (a judgement that finds the same is not recorded again), and
   *  how many were recorded. */
  private lastCatalogDrift: string | undefined;
  private catalogDriftsRecorded = 0;

  constructor(
    private readonly cfg: JudgeConfig,
    readonly handshake: Handshake,
  ) {
    this.reads = new ReadAdmission(cfg.extra?.catalogs, cfg.posture === 'enforce');
  }

  /** Compares the prompts, resources and templates the warden listed with the locked digests: what matched (in
   *  monitor: what was listed) is admitted for gets and reads on this session, nothing else. */
  judgeCatalogs(live: Catalogs): CatalogChange[] {
    this.reads.listed(live);
    const changes = diffCatalogs(this.cfg.extra?.catalogs, live);
    const key = changes.length === 0 ? undefined : catalogsHash(live);
    if (key === this.lastCatalogDrift) return changes;
    this.lastCatalogDrift = key;
    if (key === undefined) return changes;
    if (++this.catalogDriftsRecorded > CATALOG_DRIFTS_RECORDED) {
      if (this.catalogDriftsRecorded === CATALOG_DRIFTS_RECORDED + 1) {
        this.cfg.audit({ event: 'reports_capped', server: this.cfg.serverId, report: 'catalog_drift', cap: CATALOG_DRIFTS_RECORDED });
        this.cfg.report(`server '${this.cfg.serverId}': its prompts, resources or templates changed more than ${CATALOG_DRIFTS_RECORDED} times in this session; further changes are judged as always and not recorded one by one. Review with: mcp-warden diff ${this.cfg.serverId}`);
      }
      return changes;
    }
    this.cfg.audit({ event: 'catalog_drift', server: this.cfg.serverId, changes });
    const enforce = this.cfg.posture === 'enforce';
    for (const c of changes.slice(0, REPORTED_LINES)) {
      const gated = c.state !== 'removed';
      const refused = c.kind === 'prompts' ? 'getting it' : c.kind === 'resources' ? 'reading it' : 'reading through it';
      const what = !gated ? 'reported' : enforce ? `${refused} is refused on this session` : 'allowed (monitor)';
      this.cfg.report(`server '${this.cfg.serverId}': ${c.kind} "${printable(c.id)}" ${c.state} since the lock; ${what}. Review with: mcp-warden diff ${this.cfg.serverId}`);
    }
    if (changes.length > REPORTED_LINES) this.cfg.report(`server '${this.cfg.serverId}': … and ${count(changes.length - REPORTED_LINES)} more changed prompts, resources or templates; review with: mcp-warden diff ${this.cfg.serverId}`);
    return changes;
  }

  /** Judges a complete listing (handshake, re-list) or one page of a client's listing (`partial`: it may take a
   *  tool out of the approved set, never put one in). */
  judge(tools: readonly LiveTool[], source: ListingSource, partial: boolean): Decisions {
    const { entry, extra, posture, serverId } = this.cfg;
    let decisions: Decisions;
    let diff: SurfaceDiff | undefined;
    if (!entry) decisions = decideUnpinned(tools.map((t) => t.name), posture, serverId);
    else {
      diff = diffSurface(entry, lockedExtra(extra), this.handshake, tools);
      if (partial) diff = { ...diff, tools: diff.tools.filter((t) => t.state !== 'removed') };
      decisions = decide(diff, posture);
    }
    if (!partial) {
      this.approved.clear();
      this.listed.clear();
      for (const t of tools) this.listed.add(t.name);
    }
    // Approval comes only from the warden's own complete listing; a client's page only takes away (ADR 0037
    // addendum): a tool that listing refused stays refused when a page then shows it as locked.
    for (const [name, d] of decisions.tools) {
      if (d.decision !== 'allow') this.approved.delete(name);
      else if (!partial) this.approved.add(name);
    }
    this.record(tools, source, partial, decisions, diff);
    return decisions;
  }

  private record(tools: readonly LiveTool[], source: ListingSource, partial: boolean, decisions: Decisions, diff: SurfaceDiff | undefined): void {
    const { serverId, entry } = this.cfg;
    const hs = this.handshake;
    const live = liveSurfaceHash(hs, tools);
    const changed: ToolChangeRecord[] = (diff?.tools ?? [])
      .filter((t) => t.state !== 'matched')
      .map((t) => ({ name: t.name, state: t.state as ToolChangeRecord['state'], classes: t.classes, fields: t.fields, decision: decisions.tools.get(t.name)?.decision ?? 'reported' }));
    const somethingRefused = [...decisions.tools.values()].some((d) => d.decision !== 'allow');
    const key = `${live}|${decisions.pinState}`;
    let worthReporting = source === 'handshake' || (!partial && key !== this.lastReported) || (partial && somethingRefused && key !== this.lastReported);
    if (worthReporting && source !== 'handshake' && ++this.surfacesRecorded > SURFACES_RECORDED) {
      worthReporting = false;
      if (!this.surfacesCapped) this.cfg.report(`server '${serverId}': its surface changed more than ${SURFACES_RECORDED} times in this session; further changes are judged as always and not recorded one by one. Review with: mcp-warden diff ${serverId}`);
      this.surfacesCapped = true;
    }
    if (worthReporting) {
      this.lastReported = key;
      this.cfg.audit({
        event: 'surface',
        server: serverId,
        source,
        pinState: decisions.pinState,
        surfaceHash: live,
        ...(entry ? { lockedSurfaceHash: entry.surface_hash, lockedRevision: entry.protocol.era } : {}),
        revision: hs.era,
        ...(diff?.instructionsChanged ? { instructionsChanged: true } : {}),
        ...(diff && diff.handshake.state !== 'matched' ? { handshake: { state: diff.handshake.state, fields: diff.handshake.fields } } : {}),
        changed,
      });
      if (diff && diff.handshake.state !== 'matched' && this.cfg.posture === 'monitor') this.cfg.report(`server '${serverId}': ${diff.handshake.state === 'changed' ? `its initialize result changed since the lock (${diff.handshake.fields.map((f) => printable(f)).join(', ')})` : 'warden.lock holds no print of its initialize result'}: allowed (monitor). Review with: mcp-warden diff ${serverId}`);
      for (const c of changed.slice(0, REPORTED_LINES)) this.cfg.report(`server '${serverId}': tool "${printable(c.name)}" ${c.state}${c.classes.length ? ` (${c.classes.join(', ')}${c.fields.length ? `; fields ${c.fields.join(', ')}` : ''})` : ''}: ${c.decision === 'allow' ? (this.cfg.posture === 'enforce' ? 'allowed (only its hints moved toward a more-gated claim)' : 'allowed (monitor)') : c.decision === 'reported' ? 'reported' : c.decision === 'hide' ? 'hidden until pinned' : 'refused'}. Review with: mcp-warden diff ${serverId}`);
      if (changed.length > REPORTED_LINES) this.cfg.report(`server '${serverId}': ${moreTools(changed.slice(REPORTED_LINES))}; review with: mcp-warden diff ${serverId}`);
      if (diff?.era) this.cfg.report(`server '${serverId}': negotiated revision ${diff.era.live}, locked under ${diff.era.locked}; tools compared by their own digests.`);
    }
    // One report per tool and claim: a new description with the same claim is the same fact (the tool stays
    // blocked whatever is reported).
    let unreported = 0;
    for (const t of diff?.tools ?? []) {
      const key = `${t.name}\u0000${t.widening.join(',')}`;
      if (t.widening.length === 0 || this.wideningReported.has(key)) continue;
      if (this.wideningReported.size >= WIDENINGS_REPORTED) {
        unreported++;
        continue;
      }
      this.wideningReported.add(key);
      this.cfg.audit({ event: 'tier_widening_blocked', server: serverId, tool: t.name, hints: t.widening });
      this.cfg.report(`server '${serverId}': tool "${printable(t.name)}" claims a less-gated tier (${t.widening.join(', ')}); blocked in every posture.`);
    }
    if (unreported > 0 && !this.wideningsCapped) {
      this.wideningsCapped = true;
      this.cfg.report(`server '${serverId}': ${count(unreported)} more tools claim a less-gated tier and are blocked; past ${WIDENINGS_REPORTED} in a session they are not reported one by one. Review with: mcp-warden diff ${serverId}`);
    }
  }
}

/** "… and 9,989 more added tools", or with several states "… and 40 more tool changes (30 added, 10 changed)". */
function moreTools(rest: readonly ToolChangeRecord[]): string {
  const byState = new Map<string, number>();
  for (const c of rest) byState.set(c.state, (byState.get(c.state) ?? 0) + 1);
  const [only] = byState.keys();
  if (byState.size === 1) return `… and ${count(rest.length)} more ${only} tool${rest.length === 1 ? '' : 's'}`;
  return `… and ${count(rest.length)} more tool changes (${[...byState].map(([state, n]) => `${count(n)} ${state}`).join(', ')})`;
}
