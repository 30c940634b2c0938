import { createTwoFilesPatch } from 'diff';
import { WardenError } from '../error.js';
import { findingLine } from '../supervise/surface-scan.js';
import { escaped, escapedJson } from '../escape.js';
import { serialize } from '../protocol/json/write.js';
import type { JsonObject } from '../protocol/json/reader.js';
import type { SurfaceDiff } from '../surface/diff.js';
import type { CatalogChange } from '../surface/catalog.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers, type ServerConfig } from '../store/servers.js';
import { rulesDrifted, rulesPin, type RulesPin } from '../supervise/rules-pin.js';
import { line, printJson } from './output.js';
import { checkSurface, type SurfaceCheck } from '../supervise/surface-check.js';
import { recordReview } from '../supervise/review.js';

// `verify` (the CI line: exit 1 on any drift, the operator's rules changed since their pin included) and `diff` (the report: per tool, which fields, which class,
// and for a human in a terminal the text of a changed description). Exit codes follow tools.lock SPEC §9:
// 0 no drift, 1 drift, 3 no surface could be fetched, 4 lockfile error, 5 inadmissible surface. The check itself
// is supervise/surface-check.ts.

function exitCodeOf(outcomes: SurfaceCheck[]): number {
  const errors = outcomes.filter((o) => o.error).map((o) => o.error?.exitCode ?? 3);
  if (errors.length > 0) return Math.max(...errors);
  return outcomes.some((o) => o.status === 'drift') ? 1 : 0;
}

/** With `details` (`diff`, `upgrade`: a review), each changed or added catalog item carries its served text. */
export function jsonOf(o: SurfaceCheck, details = false): unknown {
  return {
    id: o.id,
    status: o.status,
    ...(o.worst ? { worst: o.worst } : {}),
    ...(o.diff ? { era: o.diff.era ?? null, instructionsChanged: o.diff.instructionsChanged, handshake: o.diff.handshake, tools: o.diff.tools.filter((t) => t.state !== 'matched').map((t) => ({ name: t.name, state: t.state, classes: t.classes, fields: t.fields, widening: t.widening, ...(details ? { served: Object.fromEntries(servedToolMembers(o, t)) } : {}) })), catalogs: (o.catalogs ?? []).map((c) => (details ? { ...c, ...servedItem(o, c) } : c)), pageMembers: o.pageMembers ?? [] } : {}),
    ...(details && o.findings ? { findings: o.findings.findings, moreFindings: o.findings.more } : {}),
    ...(o.error ? { error: { code: o.error.code, message: o.error.message } } : {}),
  };
}

/** The served members named by `fields` (all when undefined), each whole, as JSON text: a review sees all of
 *  what a pin accepts (bounded by the surface caps the fetch admitted it under). The report escapes it. */
function servedMembers(members: JsonObject | undefined, fields: readonly string[] | undefined): [string, string][] {
  return [...(members ?? new Map())].filter(([k]) => !fields || fields.includes(k)).map(([k, v]) => [k, serialize(v)]);
}

/** An added tool's members, or a changed tool's changed members, as served (JSON text, whole). */
function servedToolMembers(o: SurfaceCheck, t: SurfaceDiff['tools'][number]): [string, string][] {
  if (t.state !== 'added' && t.state !== 'changed') return [];
  return servedMembers(o.live?.find((e) => e.name === t.name)?.value, t.state === 'added' ? undefined : t.fields);
}

/** A changed or added prompt, resource or template as served: its whole JSON text, never cut (a pin accepts
 *  all of it). */
function servedItem(o: SurfaceCheck, c: CatalogChange): { served?: string } {
  const json = o.liveCatalogItems?.[c.kind]?.[c.id];
  return json === undefined ? {} : { served: json };
}

/** Untrusted text for a patch: each line through the one escaper, the line ends kept (so the patch has lines). */
function visibleLines(s: string): string {
  return s.split('\n').map(escaped).join('\n');
}

export function describeOutcome(o: SurfaceCheck, details: boolean): void {
  if (o.error) {
    line(`${escaped(o.id)}: ${o.error.code}: ${escaped(o.error.message)}`);
    return;
  }
  const d = o.diff as SurfaceDiff;
  if (o.status === 'ok') {
    line(escaped(`${o.id}: ok (${o.entry?.tools.length ?? 0} tools match ${o.entry?.surface_hash})`));
    return;
  }
  line(`${escaped(o.id)}: DRIFT (most severe: ${o.worst})`);
  if (d.era) line(`  revision: locked ${escaped(d.era.locked)}, served ${escaped(d.era.live)}`);
  if (d.instructionsChanged) line('  instructions changed');
  if (d.handshake.state === 'changed') line(`  initialize result changed  members: ${d.handshake.fields.map(escaped).join(', ')}`);
  // What a pin would accept, shown to review (in a terminal or not: a changed version is told from a payload).
  if (details && d.handshake.state !== 'matched') {
    const fields = d.handshake.state === 'changed' ? d.handshake.fields : undefined;
    const forms: [string, JsonObject | undefined][] = [[o.liveBareHandshake ? ' to a client offering capabilities' : '', o.liveHandshake], [' to a client offering none', o.liveBareHandshake], [o.liveClassicBareHandshake ? ' to a 2025 client offering capabilities' : ' to a 2025 client', o.liveClassicHandshake], [' to a 2025 client offering none', o.liveClassicBareHandshake]];
    for (const [to, members] of forms) for (const [name, json] of servedMembers(members, fields)) line(`    served${to} ${escaped(name)}: ${escapedJson(json)}`);
  }
  if (d.handshake.state === 'unlocked') line(`  initialize result not locked (an entry taken before mcp-warden locked serverInfo and capabilities): review, then mcp-warden pin ${escaped(o.id)}`);
  for (const t of d.tools.filter((x) => x.state !== 'matched')) {
    line(`  ${t.state.padEnd(8)} ${escaped(t.name)}${t.classes.length ? `  [${t.classes.join(', ')}]` : ''}${t.fields.length ? `  fields: ${t.fields.map(escaped).join(', ')}` : ''}${t.widening.length ? `  (${t.widening.join(', ')})` : ''}`);
    // What a pin would accept, shown whole to review (in a terminal or not): an added tool, a changed tool's
    // changed members.
    if (details) for (const [name, json] of servedToolMembers(o, t)) line(`    served ${escaped(name)}: ${escapedJson(json)}`);
  }
  if (details && d.instructionsChanged && !(d.handshake.state === 'changed' && d.handshake.fields.includes('instructions'))) {
    line(`    served instructions: ${o.liveInstructions === undefined ? 'none' : escapedJson(serialize(o.liveInstructions))}`);
  }
  for (const c of o.catalogs ?? []) {
    line(`  ${c.state.padEnd(8)} ${c.kind} ${escaped(c.id)}`);
    // What a pin would accept, shown whole to review (in a terminal or not), like the initialize result's members.
    const { served } = servedItem(o, c);
    if (details && served !== undefined) line(`    served: ${escapedJson(served)}`);
  }
  if (o.pageMembers?.length) line(`  listing results carry members the lock does not judge (never relayed in a session): ${o.pageMembers.map(escaped).join(', ')}`);
  // The first-trust scan of what a pin would accept (the excerpts come escaped from the scan).
  if (details && o.findings?.findings.length) {
    line(`  scan of the change (rules of src/scan): ${o.findings.findings.length + o.findings.more} finding(s)`);
    for (const f of o.findings.findings) line(`    ${findingLine(f)}`);
  }
  if (!details || !process.stdout.isTTY) return;
  if (d.instructionsChanged) line(createTwoFilesPatch('instructions (locked)', 'instructions (served)', visibleLines(o.entry?.instructions ?? ''), visibleLines(o.liveInstructions ?? '')));
  for (const t of d.tools.filter((x) => x.classes.includes('description'))) {
    const was = o.entry?.tools.find((e) => e.name === t.name)?.tool.get('description');
    const now = o.live?.find((e) => e.name === t.name)?.value.get('description');
    line(createTwoFilesPatch(`${escaped(t.name)} description (locked)`, `${escaped(t.name)} description (served)`, typeof was === 'string' ? visibleLines(was) + '\n' : '', typeof now === 'string' ? visibleLines(now) + '\n' : ''));
  }
}

export async function verifyVerb(homeFlag: string | undefined, ids: string[], json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const targets = ids.length > 0 ? ids : [...loadLocks(paths).tools.keys()].sort();
  if (targets.length === 0) throw new WardenError('LOCK_MISSING', `tools.lock at ${paths.toolsLock} has no entries. Capture one with: mcp-warden lock <id>`);
  const outcomes: SurfaceCheck[] = [];
  for (const id of targets) outcomes.push(await checkSurface(paths, id));
  // Rules changed since they were pinned are drift too: what the client is shown and may call changed.
  const rules = new Map(outcomes.map((o) => [o.id, o.error ? undefined : rulesOf(paths, o.id)]));
  if (json) printJson({ servers: outcomes.map((o) => ({ ...(jsonOf(o) as object), ...rulesJson(rules.get(o.id)) })) });
  else
    for (const o of outcomes) {
      describeOutcome(o, false);
      const pin = rules.get(o.id);
      if (pin && rulesDrifted(pin)) {
        if (o.status === 'ok') line(`${escaped(o.id)}: the operator's rules changed since they were pinned`);
        describeRules(o.id, pin);
      }
    }
  const code = exitCodeOf(outcomes);
  return code === 0 && [...rules.values()].some((pin) => pin !== undefined && rulesDrifted(pin)) ? 1 : code;
}

function rulesJson(pin: RulesPin | undefined): object {
  return pin ? { rules: { state: pin.state, changed: rulesDrifted(pin), hash: pin.now ?? null, pinned: pin.pinned ?? null } } : {};
}

/** The operator's rules against the hash warden.lock pinned (undefined when the server is unknown or not locked:
 *  the surface check says so). */
function rulesOf(paths: HomePaths, id: string): RulesPin | undefined {
  const servers = loadServers(paths);
  const extra = loadLocks(paths).warden.get(id);
  return Object.hasOwn(servers.servers, id) && extra ? rulesPin(servers.servers[id] as ServerConfig, extra) : undefined;
}

function describeRules(id: string, pin: RulesPin): void {
  if (!rulesDrifted(pin)) return;
  const short = (h: string | undefined): string => (h ? `${h.slice(0, 23)}…` : 'none');
  line(`  rules    ${pin.state}: ${short(pin.now)} in servers.json, ${short(pin.pinned)} pinned in warden.lock`);
  line(escaped(`To review the rules: mcp-warden rules ${id}; to accept them as they are: mcp-warden rules ${id} --pin`));
}

export async function diffVerb(homeFlag: string | undefined, id: string, json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const o = await checkSurface(paths, id, { review: true });
  // What is shown now is what a pin will accept (supervise/review.ts).
  if (o.review) recordReview(paths, id, o.review);
  const rules = o.error ? undefined : rulesOf(paths, id);
  if (json) printJson({ ...(jsonOf(o, true) as object), ...rulesJson(rules) });
  else {
    describeOutcome(o, true);
    if (o.status === 'ok' && rules && rulesDrifted(rules)) line(`${escaped(id)}: the operator's rules changed since they were pinned`);
    if (rules) describeRules(id, rules);
  }
  if (o.status === 'drift' && !json) line(escaped(`To accept the served surface: mcp-warden pin ${id} (or one tool: mcp-warden pin ${id} --tool NAME)`));
  const code = exitCodeOf([o]);
  return code === 0 && rules && rulesDrifted(rules) ? 1 : code;
}
