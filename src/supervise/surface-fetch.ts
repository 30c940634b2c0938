import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import { GUARDS_REQUIRE_ESM } from '../launch/node-release.js';
import { InadmissibleError, DEFAULT_CAPS, type Handshake, type LiveTool } from '../surface/admit.js';
import { DEFAULT_CHANNEL_LIMITS, ProtocolError } from '../proxy/channel.js';
import { FULL_CAPABILITIES, fetchOnce } from '../proxy/fetch.js';
import { loadClientSeen } from '../store/client-seen.js';
import type { HomePaths } from '../store/paths.js';
import { appendAudit } from '../audit/log.js';
import type { LearnedModule } from '../launch/module-guard.js';
import { attestAndLaunch } from './attested-launch.js';
import { stopLaunched } from './attested-launch.js';
import type { LaunchPlan } from '../attest/plan.js';
import type { Catalogs, ServedCatalogs } from '../surface/catalog.js';
import { distinctPrints, type HandshakePrint } from '../surface/handshake-print.js';

// Fetching a server's surface out of band for lock, pin, verify and diff: the same attested launch as `run`,
// a fresh process for each fetch, once as a client offering roots, sampling and elicitation and once as a
// client offering nothing (to learn which tools depend on capabilities).

export interface Fetched {
  handshake: Handshake;
  tools: LiveTool[];
  catalogs: Catalogs;
  /** The catalogs' items as served (their JSON text), for `diff` to show what a pin would accept. */
  servedCatalogs: ServedCatalogs;
  conditional: string[];
  /** The prints of the initialize results of both launches, when they differ (the server's answer depends on
   *  the client's capabilities), else one. */
  handshakes: HandshakePrint[];
  /** The initialize result served to a client offering no capabilities (`handshake` is the one to a client
   *  offering them). */
  bareHandshake: Handshake;
  /** "METHOD member" for each member of a listing result beside its items and cursor (response-shape.ts). */
  pageMembers: string[];
  plan: LaunchPlan;
}

/** At enrollment: receives what the server loaded from outside its attested set during the first fetch. */
export type OnLearned = (seen: LearnedModule[]) => Promise<void>;

async function fetchWith(paths: HomePaths, id: string, offered: string, capabilities: Record<string, unknown>, say: (m: string) => void, learn = false): Promise<{ handshake: Handshake; tools: LiveTool[]; catalogs: Catalogs; servedCatalogs: ServedCatalogs; pageMembers: string[]; plan: LaunchPlan; learned: LearnedModule[] }> {
  const launched = await attestAndLaunch(paths, id, say, undefined, { learnModules: learn });
  let stderr = '';
  launched.child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
  let noise = 0;
  try {
    const got = await fetchOnce({ serverIn: launched.child.stdin, serverOut: launched.child.stdout, verifyWriter: launched.verifyWriter }, { offered, clientInfo: loadClientSeen(paths, id) }, capabilities, DEFAULT_CAPS, { ...DEFAULT_CHANNEL_LIMITS, requestTimeoutMs: 20_000 }, () => noise++);
    await stopLaunched(paths, id, launched, 'client_eof', { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace: true, say });
    if (learn) sayRequiredEsm(id, launched.guard?.report().requireEsm ?? [], say);
    return { ...got, plan: launched.plan, learned: launched.guard?.report().learned ?? [] };
  } catch (err) {
    const cause = err instanceof InadmissibleError ? 'inadmissible' : 'protocol_error';
    const stopped = await stopLaunched(paths, id, launched, cause, { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace: false, say });
    for (const module of stopped.refusedModules) await appendAudit(paths.audit, { event: 'module_refused', server: id, pid: launched.pid, module });
    // The server's text, through the one escaper (ADR 0039), quoted: its newlines show as \n, its quotes as \".
    const tail = stderr.trim() ? ` Its stderr ended with: "${printable(stderr.trim().slice(-300), 300)}"` : '';
    if (err instanceof InadmissibleError) throw new WardenError('SURFACE_INADMISSIBLE', `server '${id}' served a tool surface that cannot be admitted: ${err.reason}.`);
    if (err instanceof ProtocolError) throw new WardenError('PROTOCOL_FAILURE', `could not fetch the surface of server '${id}': ${err.message}.${tail}`);
    throw err;
  }
}

/** At enrollment: the ES modules the server require()d on a node that runs it with require(esm) off (node
 *  answered ERR_REQUIRE_ESM), named with the node releases that can run them behind the module guard. */
function sayRequiredEsm(id: string, files: string[], say: (m: string) => void): void {
  if (files.length === 0) return;
  const named = files.slice(0, 3).map((f) => `"${printable(f, 200)}"`).join(', ') + (files.length > 3 ? ` and ${files.length - 3} more` : '');
  say(
    `Note: server '${id}' require()d ${named}, which node loads only as an ES module. Its node loads the imports of such a module past the module guard, so the warden runs it with require() of ES modules off, and node answered the server ERR_REQUIRE_ESM (docs/adr/0049-require-esm-on-node-20.md). ` +
      `If the server needs ${files.length === 1 ? 'it' : 'them'}, enroll it again with ${GUARDS_REQUIRE_ESM} as its command's node, which checks what such a module imports.`,
  );
}

/** With `onLearned` (enrollment), the first launch runs the module guard in learn mode and hands over what the
 *  server loaded from outside its package before the second launch, which enforces. */
export async function fetchSurface(paths: HomePaths, id: string, offered: string, say: (m: string) => void, onLearned?: OnLearned): Promise<Fetched> {
  const full = await fetchWith(paths, id, offered, FULL_CAPABILITIES, say, onLearned !== undefined);
  if (onLearned) await onLearned(full.learned);
  const bare = await fetchWith(paths, id, offered, {}, say);
  const bareNames = new Set(bare.tools.map((t) => t.name));
  return { ...full, conditional: full.tools.map((t) => t.name).filter((n) => !bareNames.has(n)), handshakes: distinctPrints([full.handshake.print, bare.handshake.print]), bareHandshake: bare.handshake };
}
