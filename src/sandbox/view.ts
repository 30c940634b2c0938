import { loadLocks } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { findEngine, findNsenter } from './engine.js';
import { sandboxGrantProblem } from './grant-policy.js';
import { dataDirOf, denyProblem, sandboxUserHome } from './plan.js';
import { sandboxPin, type SandboxPin } from './pin.js';
import type { Sandbox } from './schema.js';

// What `sandbox <id>` and `status` show of a server's sandbox: as declared, its pin, and whether this host can
// apply it (the engine found on the trusted path, or why not).

export interface SandboxView {
  server: string;
  sandbox: Sandbox | undefined;
  pin: SandboxPin;
  /** Whether a launch would start: false when the sandbox is not the pinned one or cannot be applied here. */
  launchable: boolean;
  /** The engine found (its path), or the refusal a launch would meet (code and sentence). */
  engine: { file: string } | { code: string; message: string } | undefined;
}

export function sandboxView(paths: HomePaths, id: string): SandboxView {
  const file = loadServers(paths);
  const server = serverById(file, id, paths);
  const pin = sandboxPin(server, loadLocks(paths).warden.get(id));
  let engine: SandboxView['engine'];
  if (server.sandbox !== undefined && server.sandbox !== 'unconfined') {
    try {
      // As at launch (sandbox/launch.ts): this server's own grants are judged below, with their own reason.
      const lookup = { path: file.path, sandboxes: Object.fromEntries(Object.entries(file.servers).map(([other, s]) => [other, s.sandbox])), self: id };
      engine = { file: findEngine(lookup, id).file };
      if (typeof server.sandbox.network === 'object') findNsenter(lookup, id);
      // What no grant may reach is judged at launch too (sandbox/plan.ts): a sandbox that reached servers.json
      // without that check (an earlier version, by hand) shows here as the launch would refuse it.
      const problem = sandboxGrantProblem(server.sandbox, { id, trustedPath: file.path, alerts: file.alerts, wardenHome: paths.home, sandboxes: lookup.sandboxes }) ?? denyProblem(server.sandbox, { userHome: sandboxUserHome(), wardenHome: paths.home, dataDir: dataDirOf(paths.home, id) });
      if (problem !== undefined) engine = { code: 'SANDBOX_UNAVAILABLE', message: `the sandbox of server '${id}' cannot be applied: ${problem}. Change it with: mcp-warden sandbox ${id} (see docs/guide.md, "Confining a server").` };
    } catch (err) {
      const e = err as { code?: string; message: string };
      engine = { code: e.code ?? 'SANDBOX_UNAVAILABLE', message: e.message };
    }
  }
  const launchable = (pin.state === 'none' || pin.state === 'pinned') && (engine === undefined || 'file' in engine);
  return { server: id, sandbox: server.sandbox, pin, launchable, engine };
}

/** What `status` shows of a server's sandbox: its level, whether a launch would apply it, and the last refusal
 *  of a launch for a sandbox reason (from the audit log). */
export interface SandboxStatus {
  state: 'none' | 'unconfined' | 'confined';
  network?: string;
  pin: SandboxPin['state'];
  launchable: boolean;
  problem?: { code: string; message: string };
  lastRefusal?: { code: string; at: string };
  /** What its sandbox refused at run time, the last ones first (at most DENIALS_SHOWN; the audit log has them all). */
  denied?: ({ kind: 'connect'; host: string; port: number; reason: string; address?: string; at: string } | { kind: 'read'; path: string; reason: string; at: string } | { kind: 'write'; path: string; call: string; errno: string; truncated?: true; source?: 'guard'; at: string })[];
  /** Whether the denied writes of its last confined session were observed (sandbox/write-trace.ts), and why not. */
  writes?: { observed: true } | { observed: false; why: string; byGuard?: true };
}

/** How many sandbox_denied events `status` shows. */
export const DENIALS_SHOWN = 5;

export function sandboxStatus(v: SandboxView, history: readonly Record<string, unknown>[]): SandboxStatus {
  const s = v.sandbox;
  const denied = history.filter((e) => e.event === 'sandbox_denied' && e.server === v.server).slice(-DENIALS_SHOWN).reverse()
    .map((e) => (e.kind === 'write'
      ? { kind: 'write' as const, path: String(e.path), call: String(e.call), errno: String(e.errno), ...(e.truncated === true ? { truncated: true as const } : {}), ...(e.source === 'guard' ? { source: 'guard' as const } : {}), at: String(e.ts) }
      : e.kind === 'read'
      ? { kind: 'read' as const, path: String(e.path), reason: String(e.reason), at: String(e.ts) }
      : { kind: 'connect' as const, host: String(e.host), port: Number(e.port), reason: String(e.reason), ...(typeof e.address === 'string' ? { address: e.address } : {}), at: String(e.ts) }));
  const writes = writesObserved(v.server, history);
  const refusal = history.filter((e) => e.event === 'launch' && e.server === v.server && e.decision === 'refuse' && typeof e.code === 'string' && e.code.startsWith('SANDBOX_')).at(-1);
  return {
    state: s === undefined ? 'none' : s === 'unconfined' ? 'unconfined' : 'confined',
    ...(typeof s === 'object' ? { network: typeof s.network === 'string' ? s.network : 'domains' } : {}),
    pin: v.pin.state,
    launchable: v.launchable,
    ...(v.engine && 'code' in v.engine ? { problem: v.engine } : {}),
    ...(refusal ? { lastRefusal: { code: refusal.code as string, at: String(refusal.ts) } } : {}),
    ...(denied.length > 0 ? { denied } : {}),
    ...(writes ? { writes } : {}),
  };
}

/** From the last allowed confined launch of `server` on: whether its denied writes were observed, and why not
 *  (the launch's `writesWhy`, or a tracer that stopped during the session). */
function writesObserved(server: string, history: readonly Record<string, unknown>[]): SandboxStatus['writes'] {
  let at = history.length - 1;
  while (at >= 0 && !(history[at]?.event === 'launch' && history[at]?.server === server && history[at]?.decision === 'allow')) at--;
  const sandbox = history[at]?.sandbox as { writes?: unknown; writesWhy?: unknown } | undefined;
  if (at < 0 || typeof sandbox?.writes !== 'string') return undefined;
  const died = history.slice(at).find((e) => e.event === 'sandbox_writes_unobserved' && e.server === server);
  if (died) return { observed: false, why: String(died.why) };
  if (sandbox.writes === 'observed') return { observed: true };
  // Not seen in the kernel; a node server's module guard reported what its own fs calls were refused (docs/adr/0068).
  return { observed: false, why: String(sandbox.writesWhy ?? (sandbox.writes === 'off' ? 'off by servers.json' : 'unknown')), ...(sandbox.writes === 'guard' ? { byGuard: true as const } : {}) };
}
