import * as v from 'valibot';
import { objectRecord } from '../schema/own-record.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { explainIssues } from '../schema/issues.js';
import { loadLocks, saveSandboxHash } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById, updateServers } from '../store/servers.js';
import { sandboxGrantProblem } from './grant-policy.js';
import { sandboxPin } from './pin.js';
import { dataDirOf, denyProblem, sandboxUserHome } from './plan.js';
import { sandboxHash, sandboxSchema, type Sandbox } from './schema.js';

// Changing a server's sandbox through the CLI (`mcp-warden sandbox <id> --network … --allow-write …`): the
// edits are applied to the sandbox as written in servers.json, validated by the schema that reads the file,
// saved under servers.json's lock, pinned in warden.lock and audited (`sandbox_changed`). A sandbox edited by
// hand since the last pin refuses any edit unless `pin` accepts it first (an edit pins the result with it).

export interface SandboxEdits {
  network?: string;
  allowWrite?: string[];
  allowRead?: string[];
  denyRead?: string[];
  allowDomain?: string[];
  unconfined?: boolean;
  clear?: boolean;
}

export interface SandboxChange {
  from?: string;
  to?: string;
  changed: boolean;
}

const touchesConfinement = (e: SandboxEdits): boolean =>
  e.network !== undefined || [e.allowWrite, e.allowRead, e.denyRead, e.allowDomain].some((l) => l !== undefined && l.length > 0);

/** The sandbox after `e`, as plain JSON for the schema to judge (undefined: none). */
function applyEdits(before: Sandbox | undefined, e: SandboxEdits, id: string): unknown {
  if (e.unconfined && (touchesConfinement(e) || e.clear)) throw new WardenError('USAGE', `--unconfined runs server '${id}' without a sandbox; it cannot be combined with --clear or a confinement flag. Nothing was changed.`);
  const domains = e.allowDomain ?? [];
  if (domains.length > 0 && e.network !== undefined) throw new WardenError('USAGE', `--network ${e.network} and --allow-domain both set the network of server '${id}'; give one (--allow-domain makes it { "domains": [...] }). Nothing was changed.`);
  if (e.unconfined) return 'unconfined';
  let s: Record<string, unknown> | undefined = e.clear || before === undefined || before === 'unconfined' ? undefined : structuredClone(before) as unknown as Record<string, unknown>;
  if (!touchesConfinement(e)) return s;
  s ??= { network: 'none', write: [], read: { allow: [], deny: [] } };
  const read = s.read as { allow: unknown[]; deny: unknown[] };
  if (e.network !== undefined) s.network = e.network;
  const add = (list: unknown[], more: string[] | undefined): void => {
    for (const p of more ?? []) if (!list.includes(p)) list.push(p);
  };
  if (domains.length > 0) {
    // A level becomes the list of the names granted; names add to a list already there.
    if (typeof s.network !== 'object' || s.network === null) s.network = { domains: [] };
    add((s.network as { domains: unknown[] }).domains, domains);
  }
  add(s.write as unknown[], e.allowWrite);
  add(read.allow, e.allowRead);
  add(read.deny, e.denyRead);
  return s;
}

function validated(candidate: unknown, id: string, file: string): Sandbox | undefined {
  if (candidate === undefined) return undefined;
  // Own keys: a server may be named "constructor" (valibot's record drops that key).
  const schema = v.object({ servers: objectRecord(v.string(), v.object({ sandbox: sandboxSchema })) });
  const r = v.safeParse(schema, { servers: { [id]: { sandbox: candidate } } });
  if (r.success) return (r.output.servers[id] as { sandbox: Sandbox }).sandbox;
  const { problem } = explainIssues('servers.json', schema, r.issues);
  throw new WardenError('SANDBOX_INVALID', `${problem}. File: ${file}. Nothing was changed; correct the option and run the command again.`);
}

/** Applies `edits` to server `id`'s sandbox, writes it, pins its hash in warden.lock and audits the change. */
export async function changeSandbox(paths: HomePaths, id: string, edits: SandboxEdits, pin: boolean): Promise<SandboxChange> {
  serverById(loadServers(paths), id, paths);
  if (!loadLocks(paths).warden.get(id)) throw new WardenError('LOCK_MISSING', `server '${id}' has no entry in warden.lock, so its sandbox cannot be pinned. Capture one first: mcp-warden lock ${id}`);
  let change: SandboxChange = { changed: false };
  let state: 'confined' | 'unconfined' | 'none' = 'none';
  await updateServers(paths, async (file) => {
    const server = serverById(file, id, paths);
    const pinState = sandboxPin(server, loadLocks(paths).warden.get(id));
    const editing = edits.clear === true || edits.unconfined === true || touchesConfinement(edits);
    if (!pin && editing && pinState.state !== 'none' && pinState.state !== 'pinned') {
      throw new WardenError('SANDBOX_NOT_PINNED', `the sandbox of server '${id}' in ${paths.servers} is not the one pinned in warden.lock (${pinState.state} since the last pin, probably by hand). Review it with: mcp-warden sandbox ${id}; then pin it (mcp-warden sandbox ${id} --pin) and edit again, or add --pin to this command. Nothing was changed.`);
    }
    const after = validated(applyEdits(server.sandbox, edits, id), id, paths.servers);
    const sandboxes = Object.fromEntries(Object.entries(file.servers).map(([other, s]) => [other, other === id ? after : s.sandbox]));
    const problem = sandboxGrantProblem(after, { id, trustedPath: file.path, alerts: file.alerts, wardenHome: paths.home, sandboxes });
    if (problem !== undefined) throw new WardenError('SANDBOX_INVALID', `${problem}. File: ${paths.servers}. Nothing was changed; grant another path (docs/guide.md, "Confining a server").`);
    const deny = after !== undefined && after !== 'unconfined' ? denyProblem(after, { userHome: sandboxUserHome(), wardenHome: paths.home, dataDir: dataDirOf(paths.home, id) }) : undefined;
    if (deny !== undefined) throw new WardenError('SANDBOX_INVALID', `the sandbox of server '${id}' cannot be applied: ${deny}. File: ${paths.servers}. Nothing was changed (docs/guide.md, "Confining a server").`);
    const to = after !== undefined ? sandboxHash(after) : undefined;
    state = after === undefined ? 'none' : after === 'unconfined' ? 'unconfined' : 'confined';
    change = { ...(pinState.pinned ? { from: pinState.pinned } : {}), ...(to ? { to } : {}), changed: to !== pinState.pinned };
    if (after !== undefined) server.sandbox = after;
    else delete server.sandbox;
    // Pinned before servers.json is written, under its lock: a failure between leaves a sandbox that differs
    // from the pin, which refuses the launch (fail closed).
    if (change.changed) await saveSandboxHash(paths, id, to);
  });
  if (change.changed) await appendAudit(paths.audit, { event: 'sandbox_changed', server: id, via: 'cli', state, ...(change.from ? { from: change.from } : {}), ...(change.to ? { to: change.to } : {}) });
  return change;
}
