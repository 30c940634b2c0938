import fs from 'node:fs';
import path from 'node:path';
import { INSTALL_ROOT } from '../launch/module-guard.js';
import { loadImports } from '../store/imports.js';
import { resolveHome } from '../store/paths.js';
import type { Sandbox } from './schema.js';

// Where a grant may never point, whoever asks (docs/adr/0050-sandbox-engine.md, addendum "What no grant may
// reach"). Judged when a sandbox is set or pinned (`mcp-warden sandbox`, SANDBOX_INVALID) and again at every
// launch (sandbox/plan.ts, SANDBOX_UNAVAILABLE), since servers.json and the trusted path can be edited by hand.
// What a confined server writes is owned by the warden's uid, so "root- or warden-owned" says nothing about who
// wrote a program: a write grant over a directory a program is looked up in, or one the system runs from, lets
// the server plant a program the warden or root runs next, outside every namespace.

/** The kernel's views: a grant there shows other processes (/proc/PID/environ), devices or kernel knobs. */
const KERNEL_DIRS = ['/proc', '/sys', '/dev'];
/** Where the host's services listen: a unix socket on a read-only mount still accepts connections (the user's
 *  session bus starts any command as a systemd unit, outside every namespace; docker's socket is root). The
 *  sandbox hides it (sandbox/plan.ts); no grant may hand it back. /var/run is a link to it (caught by inode). */
const SOCKET_DIRS = ['/run'];
/** What the system runs from: programs, libraries, the loader's configuration (/etc/ld.so.preload), boot. */
const SYSTEM_DIRS = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/boot', '/opt'];

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');
const overlaps = (a: string, b: string): boolean => inside(a, b) || inside(b, a);
const strictlyInside = (p: string, dir: string): boolean => p !== dir && inside(p, dir);

/** The object at `p` (following links) as "dev:ino", or undefined when nothing is there. */
function inodeOf(p: string): string | undefined {
  try {
    const st = fs.statSync(p, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** The objects of the strict ancestors of `p`, by their names ("dev:ino"). */
function ancestorInodes(p: string): Set<string> {
  const out = new Set<string>();
  for (let at = path.resolve(p); path.dirname(at) !== at; ) {
    at = path.dirname(at);
    const key = inodeOf(at);
    if (key !== undefined) out.add(key);
  }
  return out;
}

/** Whether `a` lies strictly inside `b` as objects: one of `a`'s ancestors is `b`'s directory by device and inode
 *  (a bind mount gives a directory a second name no realpath leads back to; st_dev and st_ino stay). */
function insideByInode(a: string, b: string): boolean {
  const key = inodeOf(b);
  return key !== undefined && key !== inodeOf(a) && ancestorInodes(a).has(key);
}

/** Whether `a` and `b` are, hold or lie inside each other by name, by realpath or as objects (device, inode). */
function reaches(a: string, b: string): boolean {
  if (overlaps(a, b)) return true;
  const ka = inodeOf(a);
  const kb = inodeOf(b);
  if (ka === undefined || kb === undefined) return false;
  return ka === kb || ancestorInodes(a).has(kb) || ancestorInodes(b).has(ka);
}

/** The mount points of this process's mount namespace (/proc/self/mountinfo, field 5, octal escapes decoded). */
export function mountPoints(): string[] {
  let text: string;
  try {
    text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((line) => {
    const field = line.split(' ')[4];
    return field === undefined ? [] : [field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))];
  });
}

/** Whether `p` reaches `dir` (reaches), or holds a mount point that does: a bind mount below a grant can show a
 *  protected directory there under a name no ancestor walk finds. */
function reachesWithMounts(p: string, dir: string, mounts: readonly string[]): boolean {
  return reaches(p, dir) || mounts.some((m) => strictlyInside(m, p) && reaches(m, dir));
}

/** `p` and its realpath (when it exists). */
function bothNames(p: string): string[] {
  try {
    return [...new Set([p, fs.realpathSync(p)])];
  } catch {
    return [p];
  }
}

/** The absolute directories of a PATH-like list. */
const pathDirs = (list: string | undefined): string[] => (list ?? '').split(':').filter((d) => path.isAbsolute(d)).map((d) => path.resolve(d));

/** An alert sink as servers.json holds it: an exec sink names a program the warden runs unconfined, as its own
 *  uid, on every alert (alert/sinks.ts). */
export type AlertSinkConfig = { type: string; command?: readonly string[] };

/** The directories of what an exec sink runs: its program and every absolute path among its arguments (a script
 *  given to an interpreter is a program too). */
const execSinkDirs = (alerts: readonly AlertSinkConfig[]): string[] =>
  alerts.flatMap((a) => (a.type === 'exec' ? (a.command ?? []).filter((c) => path.isAbsolute(c)) : [])).flatMap((c) => [...new Set([path.dirname(path.resolve(c)), path.dirname(bothNames(c).at(-1) as string)])]);

/** The run-time configuration of the programs the warden runs unconfined, as this process finds it: git's global
 *  files (the fleet daemon's git keeps them for credential helpers and ssh, and they name programs git runs:
 *  credential.helper, core.sshCommand) and npm's user configuration (it names the shell and scripts npm runs). */
function runtimeConfigs(): { dir: string; what: string }[] {
  const env = process.env;
  const home = env.HOME !== undefined && path.isAbsolute(env.HOME) ? path.resolve(env.HOME) : undefined;
  const xdg = env.XDG_CONFIG_HOME !== undefined && path.isAbsolute(env.XDG_CONFIG_HOME) ? path.resolve(env.XDG_CONFIG_HOME) : home && path.join(home, '.config');
  const npmrc = [env.NPM_CONFIG_USERCONFIG, env.npm_config_userconfig].find((f) => f !== undefined && path.isAbsolute(f)) ?? (home && path.join(home, '.npmrc'));
  const git = 'git\'s global configuration, which names programs the fleet daemon\'s git runs (credential.helper, core.sshCommand)';
  return [
    ...(home ? [{ dir: path.join(home, '.gitconfig'), what: git }] : []),
    ...(xdg ? [{ dir: path.join(xdg, 'git'), what: git }] : []),
    ...(npmrc ? [{ dir: path.resolve(npmrc), what: "npm's user configuration, which names the shell and scripts npm runs for the warden (install, update)" }] : []),
  ];
}

/** What no write grant may be, hold or lie inside, each with what it is. */
export function protectedDirs(trustedPath: string, alerts: readonly AlertSinkConfig[] = []): { dir: string; what: string }[] {
  const node = fs.realpathSync(process.execPath);
  const named = [
    ...SYSTEM_DIRS.map((dir) => ({ dir, what: 'a system directory the warden, root and the kernel run programs and libraries from' })),
    ...pathDirs(trustedPath).map((dir) => ({ dir, what: "a directory of the trusted path (servers.json's `path`), where the warden looks up bubblewrap, nsenter, git and every server's command" })),
    ...pathDirs(process.env.PATH).map((dir) => ({ dir, what: "a directory of the warden's own PATH, where it looks up npm" })),
    { dir: path.dirname(path.dirname(node)), what: 'the install of the node running the warden' },
    { dir: INSTALL_ROOT, what: "the warden's own install" },
    ...runtimeConfigs(),
    ...execSinkDirs(alerts).map((dir) => ({ dir, what: "the directory of a program an exec alert sink runs (servers.json's `alerts`), which the warden runs unconfined on every alert" })),
  ];
  return named.flatMap(({ dir, what }) => bothNames(dir).map((d) => ({ dir: d, what })));
}

/** Where the user's session runs programs or accepts logins, under the home: login keys, systemd user units,
 *  autostart and desktop entries, the session's environment, the home's program folders (on many PATHs) and rc
 *  folders. A server writing there reaches the user's next login, outside every sandbox (review 13, finding 2). */
const SESSION_DIRS = ['.ssh', '.config/systemd', '.config/autostart', '.config/environment.d', '.config/fish', '.local/share/applications', '.local/bin', 'bin', '.bashrc.d', '.profile.d', '.zshrc.d'];
const SESSION = "where the user's session runs programs or accepts logins";

/** The user's home (HOME) and its realpath, when HOME is absolute. */
const userHomes = (): string[] => (process.env.HOME !== undefined && path.isAbsolute(process.env.HOME) && path.resolve(process.env.HOME) !== '/' ? bothNames(path.resolve(process.env.HOME)) : []);

/** Why the write grant `p` reaches a place of the user's session (SESSION_DIRS, $XDG_CONFIG_HOME's ones, or a
 *  file at the home's top level: its rc and profile files), or undefined. */
export function sessionGrantProblem(p: string, mounts: readonly string[] = mountPoints(), folder = false): string | undefined {
  const homes = userHomes();
  const xdg = process.env.XDG_CONFIG_HOME !== undefined && path.isAbsolute(process.env.XDG_CONFIG_HOME) ? path.resolve(process.env.XDG_CONFIG_HOME) : undefined;
  const dirs = [...homes.flatMap((h) => SESSION_DIRS.map((d) => path.join(h, d))), ...(xdg ? ['systemd', 'autostart', 'environment.d', 'fish'].map((d) => path.join(xdg, d)) : [])];
  const hit = dirs.flatMap(bothNames).find((d) => reachesWithMounts(p, d, mounts));
  if (hit !== undefined) return `the write grant ${p} is, holds or lies inside ${hit}, ${SESSION} (a key, unit or program written there runs at the next login, outside every sandbox); no write grant may`;
  const top = homes.find((h) => bothNames(p).some((n) => path.dirname(n) === h));
  if (top !== undefined && !folder && !isDirectory(p)) return `the write grant ${p} is a file at the top of the home ${top}, ${SESSION} (its rc and profile files run in every shell); no write grant may`;
  return undefined;
}

/** Where the MCP clients keep the configuration that names the servers (and hooks) they start: Claude Desktop,
 *  Claude Code, Cursor, VS Code (and its forks), Windsurf, Continue, Gemini CLI, Zed, Goose. A server writing there
 *  adds a command the client starts at its next start, unsupervised and unconfined (review 15, finding 1). */
const CLIENT_DIRS = ['.config/Claude', '.claude', '.cursor', '.config/Cursor', '.config/Code', '.config/Code - Insiders', '.config/VSCodium', '.vscode', '.vscode-server', '.codeium', '.windsurf', '.config/Windsurf', '.continue', '.gemini', '.config/zed', '.config/goose', '.codex', '.kiro', '.lmstudio', '.aws/amazonq', '.copilot', '.qwen', '.config/opencode'];
const CLIENT = "where an MCP client keeps the configuration naming the servers and hooks it starts (one written there runs at the client's next start, outside the sandbox and the warden)";

/** The client configuration files `import` rewrote (the home's imports.json), or undefined when it is unreadable. */
function importedFiles(wardenHome: string): string[] | undefined {
  try {
    return Object.keys(loadImports(resolveHome(wardenHome)).files).filter((f) => path.isAbsolute(f));
  } catch {
    return undefined;
  }
}

/** Why the write grant `p` reaches an MCP client's configuration (CLIENT_DIRS under the home and
 *  $XDG_CONFIG_HOME, or a file the home's imports.json lists), or undefined. */
export function clientConfigProblem(p: string, wardenHome: string, mounts: readonly string[] = mountPoints()): string | undefined {
  const xdg = process.env.XDG_CONFIG_HOME !== undefined && path.isAbsolute(process.env.XDG_CONFIG_HOME) ? path.resolve(process.env.XDG_CONFIG_HOME) : undefined;
  const fromXdg = CLIENT_DIRS.filter((d) => d.startsWith('.config/')).map((d) => d.slice('.config/'.length));
  const imported = importedFiles(wardenHome);
  if (imported === undefined) return `the write grant ${p} cannot be judged: ${path.join(wardenHome, 'imports.json')}, which lists the client configuration files import rewrote, cannot be read or is not valid; fix it, then grant again`;
  const dirs = [...userHomes().flatMap((h) => CLIENT_DIRS.map((d) => path.join(h, d))), ...(xdg ? fromXdg.map((d) => path.join(xdg, d)) : []), ...imported];
  const hit = dirs.flatMap(bothNames).find((d) => reachesWithMounts(p, d, mounts));
  return hit === undefined ? undefined : `the write grant ${p} is, holds or lies inside ${hit}, ${CLIENT}; no write grant may`;
}

/** The folders of a project where git or an MCP client finds commands it runs outside the sandbox (review 16,
 *  finding 3): git's folder (hooks, core.fsmonitor, core.hooksPath) and the clients' project configurations. */
const PROJECT_RUN_DIRS = ['.git', '.claude', '.vscode', '.cursor'];
/** A project's files that name such commands: the clients' .mcp.json, direnv's .envrc. */
const PROJECT_RUN_FILES = ['.mcp.json', '.envrc'];

/** Why the write grant `p` is or lies inside a project's .git, .claude, .vscode or .cursor folder (anywhere, by
 *  its name or its realpath), or is a project's .mcp.json or .envrc, or undefined. */
export function projectRunProblem(p: string): string | undefined {
  for (const n of bothNames(p)) {
    const parts = n.split('/');
    const at = parts.findIndex((c) => PROJECT_RUN_DIRS.includes(c));
    if (at >= 0) return `the write grant ${p} is or lies inside ${parts.slice(0, at + 1).join('/')}, where git or an MCP client finds commands it runs outside the sandbox (a hook, an MCP server entry); no write grant may`;
    if (PROJECT_RUN_FILES.includes(path.basename(n))) return `the write grant ${p} is a project's ${path.basename(n)}, which names commands an MCP client or the shell runs outside the sandbox; no write grant may`;
  }
  return undefined;
}

const isDirectory = (p: string): boolean => {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
};

export interface GrantScope {
  /** The server whose sandbox holds the grants. */
  id: string;
  trustedPath: string;
  /** servers.json's alert sinks: the programs of exec sinks run outside every sandbox. */
  alerts: readonly AlertSinkConfig[];
  /** The warden's home (its stores, locks, sockets, audit log), which a server never sees. */
  wardenHome: string;
  /** Every server's sandbox (by id), the judged one included. */
  sandboxes: Record<string, Sandbox | undefined>;
}

const writeGrants = (s: Sandbox | undefined): string[] => (s === undefined || s === 'unconfined' ? [] : s.write);
const allGrants = (s: Sandbox | undefined): string[] => (s === undefined || s === 'unconfined' ? [] : [...s.write, ...s.read.allow]);

/**
 * Why the grant `p` (to write when `write`) of server `scope.id` is refused, or undefined. A grant nested inside
 * a write grant (of any server, its own included) is refused, and a write grant holding another grant: whoever
 * writes the outer one could swap a directory on the way to the inner one between the warden's check and
 * bubblewrap's mount, and so move where the inner one appears inside the sandbox. `folder`: `p` is not there yet
 * and will be created as a folder (a proposal's; judged again once it is, when the sandbox is set).
 */
export function grantProblem(p: string, write: boolean, scope: GrantScope, folder = false): string | undefined {
  const mounts = mountPoints();
  const kernel = KERNEL_DIRS.find((d) => reachesWithMounts(p, d, mounts));
  if (kernel !== undefined) return `the grant ${p} reaches ${kernel}, the kernel's view of processes and devices (another server's /proc/PID/environ holds its secrets); no grant may`;
  const sockets = SOCKET_DIRS.find((d) => reachesWithMounts(p, d, mounts));
  if (sockets !== undefined) return `the grant ${p} reaches ${sockets}, where the host's services listen (the session bus starts any command outside the sandbox; docker's socket is root), which the sandbox hides; no grant may`;
  const home = bothNames(scope.wardenHome).find((h) => reachesWithMounts(p, h, mounts));
  if (home !== undefined) return `${p} is, holds or lies inside the warden's home ${home}, which a server never sees`;
  if (write) {
    const session = sessionGrantProblem(p, mounts, folder);
    if (session !== undefined) return session;
    const client = clientConfigProblem(p, scope.wardenHome, mounts) ?? projectRunProblem(p);
    if (client !== undefined) return client;
    const hit = protectedDirs(scope.trustedPath, scope.alerts).find(({ dir }) => reachesWithMounts(p, dir, mounts));
    if (hit !== undefined) return `the write grant ${p} is, holds or lies inside ${hit.dir}, ${hit.what}: a program written there would run outside every sandbox`;
  }
  for (const [other, sandbox] of Object.entries(scope.sandboxes)) {
    const whose = other === scope.id ? 'this server' : `server '${other}'`;
    const outer = writeGrants(sandbox).find((w) => strictlyInside(p, w) || insideByInode(p, w));
    if (outer !== undefined) return `the grant ${p} lies inside ${outer}, a write grant of ${whose}, which could swap a directory on its way`;
    if (write) {
      const inner = allGrants(sandbox).find((g) => strictlyInside(g, p) || insideByInode(g, p));
      if (inner !== undefined) return `the write grant ${p} holds ${inner}, a grant of ${whose}, whose way this server could swap`;
    }
  }
  return undefined;
}

/** The first write grant of any server that is, holds or lies inside `dir` (or its realpath), with its server. */
export function writeGrantOver(dir: string, sandboxes: Record<string, Sandbox | undefined>): { id: string; grant: string } | undefined {
  const names = bothNames(dir);
  for (const [id, sandbox] of Object.entries(sandboxes)) {
    const grant = writeGrants(sandbox).find((g) => names.some((d) => reaches(g, d)));
    if (grant !== undefined) return { id, grant };
  }
  return undefined;
}

/** The first problem of any grant of `sandbox`, or undefined. */
export function sandboxGrantProblem(sandbox: Sandbox | undefined, scope: GrantScope): string | undefined {
  if (sandbox === undefined || sandbox === 'unconfined') return undefined;
  for (const p of sandbox.write) {
    const problem = grantProblem(p, true, scope);
    if (problem !== undefined) return problem;
  }
  for (const p of sandbox.read.allow) {
    const problem = grantProblem(p, false, scope);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
