import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import { SCAN_RULES_VERSION, type FindingCode } from '../scan/rules.js';
import { scanSurface, type Finding, type ItemKind, type Neighbour, type ScanItem, type ScanResult } from '../scan/surface.js';
import type { CatalogKind, ServedCatalogs } from '../surface/catalog.js';
import type { Handshake, LiveTool } from '../surface/admit.js';
import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers } from '../store/servers.js';

// The first-trust scan at the moment a surface is about to be trusted (issue 30): `lock`, `pin` and enrollment
// (add, install, import) scan what the fresh fetch served before anything is written. A high-severity finding
// refuses the lock in enforce (SURFACE_FINDINGS, exit 3) unless the operator named its code with
// --accept-findings; in monitor it is printed and audited and the lock is taken. The audit log gets codes and
// pointers only.

/** What a fetch served, as the scan reads it: every form of the initialize result the lock takes a print of
 *  (capture-lock.ts writes `handshake` and `bareHandshake` as the handshake prints, and a hybrid's `classic` pair
 *  as the classic prints), so that nothing is locked that was not scanned. */
export interface Served {
  handshake: Handshake;
  /** The answer to a client offering no capabilities (a session of such a client is released on its print). */
  bareHandshake?: Handshake;
  /** A stateless server's answers to a 2025 initialize, with and without client capabilities (docs/adr/0055). */
  classic?: { full: Handshake; bare: Handshake };
  tools: readonly LiveTool[];
  servedCatalogs: ServedCatalogs;
}

const CATALOG_ITEM: Record<CatalogKind['kind'], ItemKind> = { prompts: 'prompt', resources: 'resource', resourceTemplates: 'template' };

/** The name of each form of the initialize result, as a finding names it (the first form: ''). */
export const HANDSHAKE_FORMS = ['', 'to a client offering no capabilities', 'classic', 'classic, to a client offering no capabilities'] as const;

/** A form of the initialize result a capture locks the print of: its name, whether it is a stateless server's
 *  answer to a 2025 client (warden.lock's classic prints), and the answer. */
export interface LockedForm {
  name: string;
  classic: boolean;
  handshake: Handshake;
}

/** Every form of the initialize result a fetch served, in the order the lock keeps their prints: the one function
 *  from "what is locked" to "what is scanned" (capture-lock.ts writes the prints of exactly these). */
export function lockedForms(served: Served): LockedForm[] {
  const forms = [served.handshake, served.bareHandshake, served.classic?.full, served.classic?.bare];
  return forms.flatMap((handshake, i) => (handshake ? [{ name: HANDSHAKE_FORMS[i] as string, classic: i >= 2, handshake }] : []));
}

/** What the scan reads of a fetch: each distinct form of the initialize result locked (a `server` item named for
 *  its form, with its instructions when they differ from a form already read), the tools, the catalogs' items. */
export function servedItems(served: Served): ScanItem[] {
  const items: ScanItem[] = [];
  const prints = new Set<string>();
  const instructions = new Set<string>();
  for (const [i, { name, handshake: form }] of lockedForms(served).entries()) {
    // A form byte-equal to one already read adds nothing (its print is the same locked print). The first form is
    // always an item: a caller that blanks its members (diff, pinTool) keeps the print it blanked.
    if (i === 0 || !prints.has(form.print.hExact)) items.push({ kind: 'server', name, value: form.members });
    prints.add(form.print.hExact);
    if (form.instructions !== undefined && !instructions.has(form.instructions)) items.push({ kind: 'instructions', name, value: form.instructions });
    if (form.instructions !== undefined) instructions.add(form.instructions);
  }
  for (const t of served.tools) items.push({ kind: 'tool', name: t.name, value: t.value });
  for (const [kind, byName] of Object.entries(served.servedCatalogs) as [CatalogKind['kind'], Record<string, string>][]) {
    for (const [name, text] of Object.entries(byName)) items.push({ kind: CATALOG_ITEM[kind], name, value: JSON.parse(text) as unknown });
  }
  return items;
}

/** The other locked servers' tool names (shadowing is judged against what is enrolled and locked). Another
 *  instance of the same program (the same command and first argument, as servers.json runs it: server-filesystem
 *  twice, for two directories) shares its names by construction and shadows nothing. */
export function neighboursOf(paths: HomePaths, id: string, locks = loadLocks(paths)): Neighbour[] {
  const servers = loadServers(paths).servers;
  const own = Object.hasOwn(servers, id) ? servers[id] : undefined;
  const program = (command: string | undefined, args: readonly string[] | undefined): string => JSON.stringify([command, args?.[0]]);
  const mine = own ? program(own.command, own.args) : undefined;
  return [...locks.tools]
    .filter(([other, entry]) => other !== id && program(entry.target, entry.args) !== mine)
    .map(([server, entry]) => ({ server, tools: entry.tools.map((t) => t.name) }));
}

export function scanServed(paths: HomePaths, id: string, served: Served): ScanResult {
  return scanSurface(id, servedItems(served), neighboursOf(paths, id));
}

/** The scan of what tools.lock holds of a server today: its tools whole, its instructions and server_info (the
 *  lock keeps only digests of the rest of the initialize result and of prompts and resources: those are scanned
 *  when they are fetched, by add, lock, pin and diff). */
export function scanLocked(paths: HomePaths, id: string): ScanResult {
  const locks = loadLocks(paths);
  const entry = locks.tools.get(id);
  if (!entry) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
  const items: ScanItem[] = [];
  if (entry.server_info) items.push({ kind: 'server', name: '', value: { serverInfo: entry.server_info } });
  if (entry.instructions !== undefined) items.push({ kind: 'instructions', name: '', value: entry.instructions });
  for (const t of entry.tools) items.push({ kind: 'tool', name: t.name, value: t.tool });
  return scanSurface(id, items, neighboursOf(paths, id, locks));
}

/** One line per finding, for a person: severity, code, item, pointer, the excerpt (escaped by the scan). */
export function findingLine(f: Finding): string {
  const form = f.item.name ? ` (${f.item.name})` : '';
  const item = f.item.kind === 'instructions' || f.item.kind === 'server' ? `${f.item.kind === 'server' ? 'initialize result' : 'instructions'}${form}` : `${f.item.kind} "${f.item.name}"`;
  return `${f.severity.toUpperCase()} ${f.code} in ${item} at ${f.pointer || '/'}: ${f.excerpt}`;
}

/** Prints and audits the findings of a capture; throws SURFACE_FINDINGS when a high one is not accepted (enforce). */
export async function gateFindings(paths: HomePaths, id: string, source: 'lock' | 'pin', result: ScanResult, accept: readonly FindingCode[], posture: 'enforce' | 'monitor', say: (m: string) => void, retry = `mcp-warden ${source} ${id}`): Promise<void> {
  const { findings, more } = result;
  for (const f of findings) say(`server '${id}': ${findingLine(f)}`);
  if (more > 0) say(`server '${id}': ${more} more findings not shown`);
  const high = findings.filter((f) => f.severity === 'high');
  const blocking = [...new Set(high.filter((f) => !accept.includes(f.code)).map((f) => f.code))];
  const refused = blocking.length > 0 && posture === 'enforce';
  if (findings.length > 0 || accept.length > 0) {
    await appendAudit(paths.audit, {
      event: 'surface_findings',
      server: id,
      source,
      rules: SCAN_RULES_VERSION,
      findings: findings.slice(0, 100).map((f) => ({ code: f.code, severity: f.severity, kind: f.item.kind, item: f.item.name, pointer: f.pointer })),
      count: findings.length + more,
      accepted: [...new Set(high.filter((f) => accept.includes(f.code)).map((f) => f.code))].sort(),
      decision: refused ? 'refused' : 'locked',
    });
  }
  if (refused) {
    throw new WardenError('SURFACE_FINDINGS', `server '${printable(id)}' serves a surface with ${high.length} high-severity finding${high.length === 1 ? '' : 's'} (${blocking.join(', ')}), listed above; nothing was locked. Review them (the server's own text, shown escaped); to lock it anyway, run: ${retry} --accept-findings ${blocking.join(',')}`);
  }
}
