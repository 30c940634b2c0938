import path from 'node:path';
import { classify, type EntryPlan } from '../clientconfig/classify.js';
import type { ClientConfig, ClientEntry } from '../clientconfig/read.js';
import { valueAt, wrapEntryText } from '../clientconfig/rewrite.js';
import { wrapTomlEntry } from '../clientconfig/toml-rewrite.js';
import { WardenError } from '../error.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { SERVER_ID_RE, type ServersFile } from '../store/servers.js';
import type { EnrollSpec } from './enrollment.js';
import type { Prepared } from './npm/install.js';
import type { StoreEntry } from './npm/store-entry.js';

// Deciding, for each entry of a client configuration, what `import` does with it, before anything is written:
// the server id it gets, the servers.json entry, and the text that will replace it in the client's file.

export type Result = 'imported' | 'already' | 'remote' | 'refused' | 'failed';

export interface Proposal {
  entry: ClientEntry;
  plan: EntryPlan;
  /** For entries to import: the server id, and whether servers.json already has it with this very command. */
  id?: string;
  reuse?: boolean;
  spec?: EnrollSpec;
  /** name@version, when --install installed the package an npx entry named. */
  installed?: string;
  /** What --install verified and put in the store for an npx entry. */
  npm?: { prepared: Prepared; store?: StoreEntry };
}

export interface Outcome {
  name: string;
  project?: string;
  id?: string;
  result: Result;
  detail?: string;
}

/** The home a client's `mcp-warden run` uses without --home (the client's environment has no MCP_WARDEN_HOME). */
export function defaultHome(): string {
  const { MCP_WARDEN_HOME: _, ...env } = process.env;
  return resolveHome(undefined, env).home;
}

/** The warden's own script, as this process was started (an npm bin link stays a link: it survives upgrades). */
export function wardenScript(): string {
  return path.resolve(process.argv[1] as string);
}

/** How a client launches the warden: the node running it, its script, and always --home with the home this
 *  import used: the client's environment (the entry's env included) must not choose it. */
export function wardenLaunch(paths: HomePaths): { command: string; prefix: string[] } {
  return { command: process.execPath, prefix: [wardenScript(), '--home', paths.home] };
}

/** The servers.json entry: the values of the variables the warden reads itself (which leave the client's entry),
 *  and the names of the others (the client keeps their values). */
export function specFor(plan: Extract<EntryPlan, { action: 'import' }>): EnrollSpec {
  return { command: plan.command, args: plan.args, env: { ...plan.wardenEnv }, passEnv: Object.keys(plan.env).sort(), posture: 'enforce', ...(plan.cwd ? { cwd: plan.cwd } : {}) };
}

function sameSpec(a: ServersFile['servers'][string], b: EnrollSpec): boolean {
  const sameEnv = JSON.stringify(Object.entries(a.env).sort()) === JSON.stringify(Object.entries(b.env).sort());
  return a.command === b.command && JSON.stringify(a.args) === JSON.stringify(b.args) && a.cwd === b.cwd && sameEnv && JSON.stringify([...a.passEnv].sort()) === JSON.stringify(b.passEnv);
}

/** The server id for an entry: its name made valid, then "-2", "-3"... when another server has it. */
export function chooseId(entry: ClientEntry, spec: EnrollSpec, servers: ServersFile, taken: Set<string>): { id: string; reuse: boolean } {
  const project = entry.project ? `${path.basename(entry.project)}.` : '';
  let base = `${project}${entry.name}`.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 60) || 'server';
  if (!SERVER_ID_RE.test(base)) base = `s-${base}`.slice(0, 60);
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}-${n}`;
    const existing = Object.hasOwn(servers.servers, id) ? servers.servers[id] : undefined;
    if (existing && sameSpec(existing, spec) && !taken.has(id)) return { id, reuse: true };
    if (!existing && !taken.has(id)) return { id, reuse: false };
  }
}

/** `launch`: how the client will start the warden (wardenLaunch), with which a Codex entry's edit is tried. */
export function propose(cfg: ClientConfig, servers: ServersFile, launch: { command: string; prefix: string[] }): Proposal[] {
  const taken = new Set<string>();
  return cfg.entries.map((entry) => {
    const classified = classify(entry, wardenScript());
    if (classified.action !== 'import') return { entry, plan: tomlWritable(cfg, entry, classified, launch, entry.name) };
    const spec = specFor(classified);
    const { id, reuse } = chooseId(entry, spec, servers, taken);
    taken.add(id);
    const plan = tomlWritable(cfg, entry, classified, launch, id);
    if (plan.action !== 'import') return { entry, plan };
    return { entry, plan, id, reuse, spec };
  });
}

/** A Codex entry to import is refused now, before anything is enrolled, when its rewrite cannot be proved to
 *  keep the file (toml-rewrite.ts): tried with the launch import will write (an npx entry's id is chosen after
 *  its install: tried with its name, a word of the same form). */
function tomlWritable(cfg: ClientConfig, entry: ClientEntry, plan: EntryPlan, launch: { command: string; prefix: string[] }, id: string): EntryPlan {
  if (cfg.kind !== 'codex' || (plan.action !== 'import' && plan.action !== 'npx')) return plan;
  const tried = wrapTomlEntry(cfg.text, entry, launch.command, [...launch.prefix, 'run', id], Object.keys(plan.wardenEnv));
  return 'reason' in tried ? { action: 'refused', reason: tried.reason } : plan;
}

/** The client file's text with `entry` launching the warden as server `id`, and the entry's new value. */
export function wrapInto(text: string, entry: ClientEntry, id: string, launch: { command: string; prefix: string[] }, dropEnv: string[]): { text: string; value: unknown } {
  if (entry.kind === 'codex') {
    const wrapped = wrapTomlEntry(text, entry, launch.command, [...launch.prefix, 'run', id], dropEnv);
    if ('reason' in wrapped) throw new WardenError('CLIENT_CONFIG_INVALID', `${entry.file}: the entry "${entry.name}" ${wrapped.reason}. Nothing was written to it.`);
    return wrapped;
  }
  const out = wrapEntryText(text, entry.location, launch.command, [...launch.prefix, 'run', id], dropEnv);
  return { text: out, value: valueAt(out, entry.location) };
}

export function outcomeOf(p: Proposal, result: Result, detail?: string): Outcome {
  return { name: p.entry.name, ...(p.entry.project ? { project: p.entry.project } : {}), ...(p.id ? { id: p.id } : {}), result, ...(detail ? { detail } : {}) };
}
