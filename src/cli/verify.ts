import { createTwoFilesPatch } from 'diff';
import { WardenError } from '../error.js';
import type { LiveTool } from '../surface/admit.js';
import { diffSurface, worstClass, type SurfaceDiff } from '../surface/diff.js';
import { liveSurfaceHash, type LockEntry } from '../surface/lockfile.js';
import { diffCatalogs, type CatalogChange } from '../surface/catalog.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { line, printJson } from './output.js';
import { fetchSurface } from '../supervise/surface-fetch.js';

// `verify` (the CI line: exit 1 on any drift) and `diff` (the report: per tool, which fields, which class,
// and for a human in a terminal the text of a changed description). Exit codes follow tools.lock SPEC §9:
// 0 no drift, 1 drift, 3 no surface could be fetched, 4 lockfile error, 5 inadmissible surface.

const say = (m: string): void => void process.stderr.write(`mcp-warden: ${m}\n`);

export interface Outcome {
  id: string;
  status: 'ok' | 'drift' | 'error';
  worst?: string;
  diff?: SurfaceDiff;
  catalogs?: CatalogChange[];
  error?: { code: string; message: string; exitCode: number };
  live?: LiveTool[];
  entry?: LockEntry;
  liveInstructions?: string | undefined;
  liveSurfaceHash?: string;
}

export async function check(paths: HomePaths, id: string): Promise<Outcome> {
  try {
    serverById(loadServers(paths), id, paths);
    const locks = loadLocks(paths);
    const entry = locks.tools.get(id);
    if (!entry) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
    const extra = locks.warden.get(id);
    const fetched = await fetchSurface(paths, id, entry.protocol.offered, say);
    const diff = diffSurface(entry, extra ? { prints: extra.tools, conditional: extra.conditional } : undefined, fetched.handshake, fetched.tools);
    const catalogs = extra ? diffCatalogs(extra.catalogs, fetched.catalogs) : [];
    const worst = worstClass(diff) ?? (diff.era ? 'era' : catalogs.length > 0 ? 'catalog' : undefined);
    const hs = fetched.handshake;
    return { id, status: worst ? 'drift' : 'ok', ...(worst ? { worst } : {}), diff, catalogs, live: fetched.tools, entry, liveInstructions: hs.instructions, liveSurfaceHash: liveSurfaceHash(hs, fetched.tools) };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { id, status: 'error', error: { code: err.code, message: err.message, exitCode: err.exitCode } };
  }
}

function exitCodeOf(outcomes: Outcome[]): number {
  const errors = outcomes.filter((o) => o.error).map((o) => o.error?.exitCode ?? 3);
  if (errors.length > 0) return Math.max(...errors);
  return outcomes.some((o) => o.status === 'drift') ? 1 : 0;
}

function jsonOf(o: Outcome): unknown {
  return {
    id: o.id,
    status: o.status,
    ...(o.worst ? { worst: o.worst } : {}),
    ...(o.diff ? { era: o.diff.era ?? null, instructionsChanged: o.diff.instructionsChanged, tools: o.diff.tools.filter((t) => t.state !== 'matched').map(({ name, state, classes, fields, widening }) => ({ name, state, classes, fields, widening })), catalogs: o.catalogs ?? [] } : {}),
    ...(o.error ? { error: { code: o.error.code, message: o.error.message } } : {}),
  };
}

/** Makes untrusted text safe for a terminal: control characters become visible escapes. */
function visible(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function describeOutcome(o: Outcome, details: boolean): void {
  if (o.error) {
    line(`${o.id}: ${o.error.code}: ${o.error.message}`);
    return;
  }
  const d = o.diff as SurfaceDiff;
  if (o.status === 'ok') {
    line(`${o.id}: ok (${o.entry?.tools.length ?? 0} tools match ${o.entry?.surface_hash})`);
    return;
  }
  line(`${o.id}: DRIFT (most severe: ${o.worst})`);
  if (d.era) line(`  revision: locked ${d.era.locked}, served ${d.era.live}`);
  if (d.instructionsChanged) line('  instructions changed');
  for (const t of d.tools.filter((x) => x.state !== 'matched')) {
    line(`  ${t.state.padEnd(8)} ${visible(t.name)}${t.classes.length ? `  [${t.classes.join(', ')}]` : ''}${t.fields.length ? `  fields: ${t.fields.join(', ')}` : ''}${t.widening.length ? `  (${t.widening.join(', ')})` : ''}`);
  }
  for (const c of o.catalogs ?? []) line(`  ${c.state.padEnd(8)} ${c.kind} ${visible(c.id)}`);
  if (!details || !process.stdout.isTTY) return;
  if (d.instructionsChanged) line(visible(createTwoFilesPatch('instructions (locked)', 'instructions (served)', o.entry?.instructions ?? '', o.liveInstructions ?? '')));
  for (const t of d.tools.filter((x) => x.classes.includes('description'))) {
    const was = o.entry?.tools.find((e) => e.name === t.name)?.tool.get('description');
    const now = o.live?.find((e) => e.name === t.name)?.value.get('description');
    line(visible(createTwoFilesPatch(`${t.name} description (locked)`, `${t.name} description (served)`, typeof was === 'string' ? was + '\n' : '', typeof now === 'string' ? now + '\n' : '')));
  }
}

export async function verifyVerb(homeFlag: string | undefined, ids: string[], json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const targets = ids.length > 0 ? ids : [...loadLocks(paths).tools.keys()].sort();
  if (targets.length === 0) throw new WardenError('LOCK_MISSING', `tools.lock at ${paths.toolsLock} has no entries. Capture one with: mcp-warden lock <id>`);
  const outcomes: Outcome[] = [];
  for (const id of targets) outcomes.push(await check(paths, id));
  if (json) printJson({ servers: outcomes.map(jsonOf) });
  else for (const o of outcomes) describeOutcome(o, false);
  return exitCodeOf(outcomes);
}

export async function diffVerb(homeFlag: string | undefined, id: string, json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const o = await check(paths, id);
  if (json) printJson(jsonOf(o));
  else describeOutcome(o, true);
  if (o.status === 'drift' && !json) line(`To accept the served surface: mcp-warden pin ${id} (or one tool: mcp-warden pin ${id} --tool NAME)`);
  return exitCodeOf([o]);
}
