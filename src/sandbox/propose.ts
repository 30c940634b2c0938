import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { WardenError } from '../error.js';
import { writeJsonAtomic } from '../store/atomic.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById, updateServers, type ServerConfig } from '../store/servers.js';
import { changeSandbox, type SandboxChange } from './edit.js';
import { grantProblem, type GrantScope } from './grant-policy.js';
import { MAX_WRITES, type Observed } from './observe.js';
import { ensureDataDir } from './plan.js';
import { MAX_ENTRIES, pathProblem } from './schema.js';
import { createFolders, removeEmpty } from './propose-folders.js';

// A sandbox proposed from what the enrollment launches did (sandbox/observe.ts), the way `rules` proposes a
// classification from the server's hints: it is the server's own behaviour, shown for review, saved in
// <home>/proposals/<id>.sandbox.json and applied only on the operator's `sandbox <id> --propose --yes`, through
// the same validated, pinned and audited path as `sandbox <id> --allow-write ...`. Network use was not observed:
// the proposal's network is "none", to be changed by the operator when the server needs one.

/** The proposal file's size bound (bytes). */
export const MAX_PROPOSAL = 256 * 1024;

const entry = v.strictObject({ path: v.pipe(v.string(), v.maxLength(4096)), why: v.pipe(v.string(), v.maxLength(1024)) });
const proposalSchema = v.strictObject({
  version: v.literal(1),
  server: v.string(),
  made: v.string(),
  /** What was watched, what could not be and why; network use is never observed (docs/adr/0063). */
  observed: v.strictObject({
    dirs: v.pipe(v.array(v.string()), v.maxLength(16)),
    kept: v.pipe(v.array(v.string()), v.maxLength(16)),
    notObserved: v.pipe(v.array(v.strictObject({ dir: v.string(), why: v.string() })), v.maxLength(16)),
    network: v.literal('not_observed'),
    unavailable: v.optional(v.string()),
  }),
  writes: v.pipe(v.array(v.strictObject({ path: v.pipe(v.string(), v.maxLength(4096)), kind: v.picklist(['write', 'delete']) })), v.maxLength(MAX_WRITES)),
  truncated: v.boolean(),
  /** The write grants proposed: directories the server wrote into, outside its temporary directory. */
  write: v.pipe(v.array(v.string()), v.maxLength(MAX_ENTRIES)),
  /** Write grants over folders that were not there before the enrollment (the server created them in its
   *  observed launch): the warden creates each, owner-only, when the proposal is applied. */
  created: v.optional(v.pipe(v.array(v.string()), v.maxLength(MAX_ENTRIES))),
  /** Places kept real (not watched) because they are or hold the server's code, the warden's package store or its
   *  install: not places its configuration names (absent in proposals of an earlier warden). */
  code: v.optional(v.pipe(v.array(v.string()), v.maxLength(16))),
  /** Writes no grant is proposed for, and why. */
  notGranted: v.pipe(v.array(entry), v.maxLength(MAX_WRITES)),
  /** Environment values offered (heuristics, by package: labelled as such). */
  env: v.pipe(v.array(v.strictObject({ name: v.string(), value: v.string(), why: v.string() })), v.maxLength(8)),
});
export type SandboxProposal = v.InferOutput<typeof proposalSchema>;

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');

/** Servers whose data file lands beside their own code by default, and the variable that moves it: a heuristic by
 *  package name, never from what the server said. */
const DATA_FILE_ENV: Record<string, { name: string; file: string }> = {
  '@modelcontextprotocol/server-memory': { name: 'MEMORY_FILE_PATH', file: 'memory.jsonl' },
};

function packageOf(server: ServerConfig): string | undefined {
  if (server.package) return server.package.name;
  for (const a of [server.command, ...server.args]) {
    for (const name of Object.keys(DATA_FILE_ENV)) if (a.includes(`/node_modules/${name}/`)) return name;
  }
  return undefined;
}

function existingAncestor(p: string): string {
  let d = path.dirname(p);
  while (d !== '/' && !present(d)) d = path.dirname(d);
  return d;
}

/** The folder the server created on the way to `p` right below `dir` (its existing ancestor), or undefined when
 *  `p` is written straight into `dir` (a file there, not a folder of its own). */
function createdFolder(p: string, dir: string): string | undefined {
  if (path.dirname(p) === dir) return undefined;
  return path.join(dir, path.relative(dir, p).split(path.sep)[0] as string);
}

const realOr = (p: string): string => {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
};

/** Why `dir` (a directory that was there before the enrollment: the observation kept every write off the real
 *  files) is never proposed: it is a dot-folder at the top of the user's home, or lies in one, or in
 *  $XDG_CONFIG_HOME. Programs keep their configuration there (an MCP client's names the commands it starts), so
 *  what is proposed is an allow-list: such a folder is granted only by hand, where the policy judges it. */
function configFolderProblem(dir: string, userHome: string | undefined): string | undefined {
  const xdg = process.env.XDG_CONFIG_HOME !== undefined && path.isAbsolute(process.env.XDG_CONFIG_HOME) ? path.resolve(process.env.XDG_CONFIG_HOME) : undefined;
  const homes = userHome !== undefined && path.isAbsolute(userHome) ? [...new Set([path.resolve(userHome), realOr(path.resolve(userHome))])] : [];
  const top = homes.flatMap((h) => [dir, realOr(dir)].map((d) => path.relative(h, d).split(path.sep)[0] as string)).find((first) => first.startsWith('.') && first !== '..');
  const config = top ?? (xdg !== undefined && [dir, realOr(dir)].some((d) => inside(d, xdg)) ? xdg : undefined);
  if (config === undefined) return projectFolderProblem(dir);
  return `${dir} lies in ${top !== undefined ? `the home's dot-folder ${top}` : config}, a folder the server did not create, where programs keep their configuration (an MCP client's names the commands it starts); such a folder is never proposed: grant it by hand if the server must write there`;
}

/** What a project holds that names commands run outside the sandbox: git's folder (hooks, core.fsmonitor), the
 *  MCP clients' project configurations, direnv's file. */
const PROJECT_RUN_NAMES = ['.git', '.claude', '.vscode', '.cursor', '.mcp.json', '.envrc'];

/** Whether anything (a dangling link included) is at `p`. */
const present = (p: string): boolean => {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/** Why `dir` (there before the enrollment) is never proposed as a project's place of commands: a dot-component
 *  anywhere in its path (.git/hooks, .claude, .vscode, a tool's hidden folder), or it holds one of
 *  PROJECT_RUN_NAMES (a write grant over a checkout is the operator's choice, made by hand). */
function projectFolderProblem(dir: string): string | undefined {
  for (const d of [...new Set([dir, realOr(dir)])]) {
    const dot = d.split('/').find((c) => c.startsWith('.') && c !== '.' && c !== '..');
    if (dot !== undefined) return `${dir} has the hidden folder ${dot} in its path (a project's .git/hooks, .claude, .vscode or .cursor name commands that run outside the sandbox), a folder the server did not create; such a folder is never proposed: grant it by hand if the server must write there`;
    const held = PROJECT_RUN_NAMES.find((n) => present(path.join(d, n)));
    if (held !== undefined) return `${dir} holds ${held}, where git or an MCP client finds commands it runs outside the sandbox, and the server did not create it; a folder holding one is never proposed: grant it by hand if the server must write there`;
  }
  return undefined;
}

/** Why a place kept real is not granted when it is the server's own code (not printed as a place to grant). */
export const OWN_CODE = "the server's own code (its executable, script or install) is never granted";

/** Who named the configuration of an enrolled server: the operator (`add`, `install`), or a client configuration
 *  file (`import`: a project's .mcp.json may have come with a clone). */
export type NamedBy = 'operator' | 'client-file';

/** The proposal for server `id` from what its enrollment launches wrote (`code`: its own files and trees). No
 *  grant is proposed that `sandbox <id> --allow-write` would refuse (sandbox/grant-policy.ts), nor one over the
 *  server's own code, nor over a configuration folder it did not create, nor (for `import`) a folder only the
 *  client file named: those are listed as not granted, with the reason. */
export function proposalFor(paths: HomePaths, id: string, server: ServerConfig, seen: Observed, userHome: string | undefined, code: string[], namedBy: NamedBy = 'operator'): SandboxProposal {
  const file = loadServers(paths);
  const sandboxes = Object.fromEntries(Object.entries(file.servers).map(([other, s]) => [other, other === id ? undefined : s.sandbox]));
  const scope: GrantScope = { id, trustedPath: file.path, alerts: file.alerts, wardenHome: paths.home, sandboxes };
  const codes = [...new Set([...code, ...code.map(realOr)])];
  const write: string[] = [];
  const created: string[] = [];
  const notGranted: { path: string; why: string }[] = [];
  for (const w of seen.writes) {
    const p = w.path;
    let why: string | undefined;
    if (inside(p, '/tmp')) why = 'covered: the sandbox gives the server a private /tmp';
    else if (inside(p, paths.home)) why = "the warden's home is never granted (a write into the package store changes what was attested)";
    else if (codes.some((c) => inside(p, c))) why = "the server's own attested files stay read-only";
    else {
      const dir = existingAncestor(p);
      const whole = (d: string): boolean => d === userHome || d.split('/').length < 3 || pathProblem(d) !== undefined;
      const own = whole(dir) ? createdFolder(p, dir) : undefined;
      if (own !== undefined && !whole(own)) {
        // A folder of its own it created there (desktop-commander's ~/.claude-server-commander): proposed, to be
        // created at apply, unless the policy refuses that path (a client's folder, a session folder, .git...).
        // The home's rule for folders that were there before does not apply: nothing of another program is in it.
        const problem = write.includes(own) ? undefined : grantProblem(own, true, scope, true);
        if (problem !== undefined) why = `wrote here, not granted: ${problem}`;
        else if (!write.includes(own) && write.length < MAX_ENTRIES) {
          write.push(own);
          created.push(own);
        }
      } else if (whole(dir)) why = `a grant would be ${dir} whole${own !== undefined ? ` (the folder it created there, ${own}, is too wide a grant too)` : ''}; grant a narrower directory if the server needs it`;
      else if (!write.includes(dir)) {
        const problem = grantProblem(dir, true, scope) ?? configFolderProblem(dir, userHome);
        if (problem !== undefined) why = `wrote here, not granted: ${problem}`;
        else if (write.length < MAX_ENTRIES) write.push(dir);
      }
    }
    if (why) notGranted.push({ path: p, why });
  }
  // What its configuration names it writes for real (not watched): proposed as it stands, outside /tmp, unless
  // it is, holds or lies in the server's code (observe.ts keeps its executable real) or the policy refuses it.
  const keptCode: string[] = [];
  for (const k of seen.kept) {
    if (inside(k, paths.home)) keptCode.push(k); // the package store, bound back as attested
    if (inside(k, paths.home) || k === userHome || write.includes(k)) continue;
    const real = realOr(k);
    if (inside(k, '/tmp')) {
      // The sandbox's private /tmp hides it: the server would not find the place its configuration names.
      if (k !== '/tmp' && !codes.some((c) => inside(c, real) || inside(real, c))) notGranted.push({ path: k, why: `not proposed: it lies in /tmp, which a confined server sees as a private, empty one; grant it by hand (sandbox ${id} --allow-write ${k}) if the server needs it` });
      continue;
    }
    // A folder only named (never watched) is proposed when the operator named it; a client file's word is not enough.
    if (namedBy === 'client-file') {
      notGranted.push({ path: k, why: `named by the client file, not granted: the imported configuration (its env or arguments) names it, which no operator wrote, and writes there are not watched; grant it by hand if the server must write there` });
      continue;
    }
    const own = codes.some((c) => inside(c, real) || inside(real, c) || inside(c, k) || inside(k, c));
    if (own) keptCode.push(k);
    const why = own ? OWN_CODE : (grantProblem(k, true, scope) ?? configFolderProblem(k, userHome));
    if (why !== undefined) notGranted.push({ path: k, why: `kept real, not granted: ${why}` });
    else if (write.length < MAX_ENTRIES) write.push(k);
  }
  const pkg = packageOf(server);
  const offer = pkg !== undefined ? DATA_FILE_ENV[pkg] : undefined;
  // Offered only when nothing gives the variable: not servers.json's env, nor the client (passEnv) at each launch.
  const env = offer && server.env[offer.name] === undefined && !server.passEnv.includes(offer.name) ? [{ name: offer.name, value: path.join(paths.home, 'data', id, offer.file), why: `heuristic: ${pkg} writes ${offer.file} beside its own script unless ${offer.name} names another file; this puts it in the server's data directory` }] : [];
  return {
    version: 1,
    server: id,
    made: new Date().toISOString(),
    observed: { dirs: seen.dirs, kept: seen.kept, notObserved: seen.notObserved, network: 'not_observed', ...(seen.unavailable ? { unavailable: seen.unavailable } : {}) },
    writes: seen.writes,
    truncated: seen.truncated,
    write: write.sort(),
    ...(created.length ? { created: created.sort() } : {}),
    ...(keptCode.length ? { code: keptCode } : {}),
    notGranted,
    env,
  };
}

export const proposalFile = (paths: HomePaths, id: string): string => path.join(paths.home, 'proposals', `${id}.sandbox.json`);

/** Whether server `id` has a saved proposal (what `sandbox <id>` points to). */
export const hasProposal = (paths: HomePaths, id: string): boolean => fs.existsSync(proposalFile(paths, id));

/** Removes a proposal an earlier enrollment of `id` left (this one observed nothing). */
export const dropProposal = (paths: HomePaths, id: string): void => fs.rmSync(proposalFile(paths, id), { force: true });

/** Saves the proposal (owner-only, atomically, bounded). */
export function saveProposal(paths: HomePaths, p: SandboxProposal): string {
  const file = proposalFile(paths, p.server);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (Buffer.byteLength(JSON.stringify(p)) > MAX_PROPOSAL) p = { ...p, writes: p.writes.slice(0, 32), notGranted: p.notGranted.slice(0, 32), truncated: true };
  writeJsonAtomic(file, p);
  return file;
}

/** The saved proposal of server `id`; refuses with SANDBOX_PROPOSAL_MISSING when there is none (or it is unreadable). */
export function loadProposal(paths: HomePaths, id: string): SandboxProposal {
  const file = proposalFile(paths, id);
  let text: string;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > MAX_PROPOSAL) throw new Error('not a regular file of bounded size');
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new WardenError('SANDBOX_PROPOSAL_MISSING', `there is no sandbox proposal for server '${id}' (${file}): one is made when add, install or import enrolls a server. Set a sandbox yourself with: mcp-warden sandbox ${id} --network none`);
  }
  const r = v.safeParse(proposalSchema, (() => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  })());
  if (!r.success || r.output.server !== id) throw new WardenError('SANDBOX_PROPOSAL_MISSING', `the sandbox proposal for server '${id}' in ${file} is not one the warden wrote (malformed). Remove it and set a sandbox yourself with: mcp-warden sandbox ${id} --network none`);
  return r.output;
}

/** Applies a proposal: the folders it grants that were not there (sandbox/propose-folders.ts), its environment
 *  offers into servers.json, then the sandbox (network none, its write grants) through `changeSandbox`
 *  (validated, pinned, audited). */
export async function applyProposal(paths: HomePaths, id: string, p: SandboxProposal, pin: boolean): Promise<SandboxChange> {
  serverById(loadServers(paths), id, paths);
  // Its new folders first: one that cannot be made refuses the apply before anything else is written.
  const made = createFolders(id, (p.created ?? []).filter((d) => p.write.includes(d)));
  if (p.env.length > 0) {
    ensureDataDir(paths.home, id);
    await updateServers(paths, (file) => {
      const server = serverById(file, id, paths);
      for (const e of p.env) server.env[e.name] = e.value;
    });
  }
  try {
    return await changeSandbox(paths, id, { clear: true, network: 'none', allowWrite: p.write }, pin);
  } catch (err) {
    for (const d of made) removeEmpty(d); // refused: leave no folder behind
    throw err;
  }
}

