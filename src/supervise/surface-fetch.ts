import { WardenError } from '../error.js';
import { printable } from '../escape.js';
import { GUARDS_REQUIRE_ESM } from '../launch/node-release.js';
import { InadmissibleError, DEFAULT_CAPS, type Handshake, type LiveTool } from '../surface/admit.js';
import { DEFAULT_CHANNEL_LIMITS, ProtocolError, type ChannelLimits, type ServerChannel } from '../proxy/channel.js';
import { FULL_CAPABILITIES, openAsClient } from '../proxy/fetch.js';
import { PROBE_TIMEOUT_MS, PreCommitError, fetchByFlow, offeredFor, selectedFlow, type Flow } from '../proxy/fetch-stateless.js';
import { loadClientSeen } from '../store/client-seen.js';
import type { HomePaths } from '../store/paths.js';
import { appendAudit } from '../audit/log.js';
import type { GuardReportOverflowEvent } from '../audit/events.js';
import type { LearnedModule } from '../launch/module-guard.js';
import type { Observed } from '../sandbox/observe.js';
import { attestAndLaunch, stopLaunched, tamperedReport, type Launched } from './attested-launch.js';
import type { LaunchPlan } from '../attest/plan.js';
import type { Catalogs, ServedCatalogs } from '../surface/catalog.js';
import { distinctPrints, type HandshakePrint } from '../surface/handshake-print.js';

// Fetching a server's surface out of band for lock, pin, verify and diff: the same attested launch as `run`,
// a fresh process for each fetch, once as a client offering roots, sampling and elicitation and once as a
// client offering nothing (to learn which tools depend on capabilities). The flow (docs/adr/0046) is the one the
// lock records, and only it; with none recorded and a modern offer (a new server: `add`, `lock`), the first
// launch probes server/discover: confirmed, the stateless flow goes on there; not confirmed, that launch ends
// and the classic flow runs on a fresh one. The second launch speaks the flow the first one settled. At enrollment
// the last launch (the one offering no capabilities) may be held open after its listing, for the canary baselines
// to be recorded on it once the lock is written (docs/adr/0061).

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
  /** The flow the surface was fetched over, and the revision it offered. */
  flow: Flow;
  offered: string;
  /** Fetched over the stateless flow, a server that also answers a 2025 initialize (a hybrid): the prints of
   *  that classic answer (with and without client capabilities when they differ) and its members as served to a
   *  client offering them, each taken over its own fresh attested launch (docs/adr/0055). */
  classic?: { prints: HandshakePrint[]; full: Handshake; bare: Handshake };
}

/** At enrollment: receives what the server loaded from outside its attested set during the first fetch. */
export type OnLearned = (seen: LearnedModule[]) => Promise<void>;

/** A launch of the fetch left open after its listing: the session (a client offering no capabilities, over the
 *  settled flow) and what it served. Whoever holds it ends it, once (a second `end` does nothing). */
export interface HeldSession {
  launched: Launched;
  channel: ServerChannel;
  /** The channel's limits, the fetch's until the holder sets its own request timeout. */
  limits: ChannelLimits;
  handshake: Handshake;
  tools: LiveTool[];
  noise: () => number;
  end: (cause: 'client_eof' | 'protocol_error', grace: boolean) => Promise<{ code: number | null; refusedModules: string[] }>;
}

/** How one launch is spoken to: the flow, the revision offered, and whether a failure before the stateless flow's
 *  commit point is handed back (a PreCommitError, after the launch ended) for the classic flow to be tried. */
interface Speech {
  flow: Flow;
  offered: string;
  probe?: boolean;
}

/** What one launch fetched. */
interface FetchedLaunch {
  handshake: Handshake;
  tools: LiveTool[];
  catalogs: Catalogs;
  servedCatalogs: ServedCatalogs;
  pageMembers: string[];
  plan: LaunchPlan;
}

async function fetchWith(paths: HomePaths, id: string, speech: Speech, capabilities: Record<string, unknown>, say: (m: string) => void, learn = false, hold = false, observe?: Observed): Promise<FetchedLaunch & { learned: LearnedModule[]; held?: HeldSession }> {
  const launched = await attestAndLaunch(paths, id, say, undefined, { learnModules: learn, ...(observe ? { observe } : {}) });
  let fetched: FetchedLaunch & { overflow: GuardReportOverflowEvent | undefined };
  let stderr = '';
  launched.child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
  let noise = 0;
  try {
    const limits = { ...DEFAULT_CHANNEL_LIMITS, requestTimeoutMs: 20_000 };
    // Before the channel's own listener (same tick: nothing is emitted between): the guard's report is read up to
    // where it is before each chunk of the server's output is judged.
    if (launched.guard) launched.child.stdout.on('data', launched.guard.look);
    const { channel, ...got } = await fetchByFlow(speech.flow, { serverIn: launched.child.stdin, serverOut: launched.child.stdout, verifyWriter: launched.verifyWriter }, { offered: speech.offered, clientInfo: loadClientSeen(paths, id) }, capabilities, DEFAULT_CAPS, limits, () => noise++, hold);
    if (hold) {
      let ended: ReturnType<HeldSession['end']> | undefined;
      const end: HeldSession['end'] = (cause, grace) => (ended ??= stopLaunched(paths, id, launched, cause, { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace, say }));
      return { ...got, plan: launched.plan, learned: [], held: { launched, channel, limits, handshake: got.handshake, tools: got.tools, noise: () => noise, end } };
    }
    const stopped = await stopLaunched(paths, id, launched, 'client_eof', { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace: true, say });
    fetched = { ...got, plan: launched.plan, overflow: stopped.reportOverflow };
  } catch (thrown) {
    if (thrown instanceof PreCommitError && speech.probe) {
      // Not a stateless server (as far as this launch showed): the launch is thrown away, and the caller tries the
      // classic flow on a fresh one.
      await stopLaunched(paths, id, launched, 'client_eof', { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace: true, say });
      throw thrown;
    }
    const err = thrown instanceof PreCommitError ? thrown.inner : thrown;
    const cause = err instanceof InadmissibleError ? 'inadmissible' : 'protocol_error';
    const stopped = await stopLaunched(paths, id, launched, cause, { nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 }, { grace: false, say });
    for (const module of stopped.refusedModules) await appendAudit(paths.audit, { event: 'module_refused', server: id, pid: launched.pid, module });
    // The server's text, through the one escaper (ADR 0039), quoted: its newlines show as \n, its quotes as \".
    const tail = stderr.trim() ? ` Its stderr ended with: "${printable(stderr.trim().slice(-300), 300)}"` : '';
    if (err instanceof InadmissibleError) throw new WardenError('SURFACE_INADMISSIBLE', `server '${id}' served a tool surface that cannot be admitted: ${err.reason}.`);
    if (err instanceof ProtocolError) throw new WardenError('PROTOCOL_FAILURE', `could not fetch the surface of server '${id}'${speech.flow === 'stateless' ? ' over the stateless flow (server/discover)' : ''}: ${err.message}.${tail}`);
    throw err;
  }
  const { overflow, ...surface } = fetched;
  if (!learn) return { ...surface, learned: [] };
  // A flooded report is the server's word past any honest size: nothing is learned from it (ADR 0014).
  if (overflow) throw new WardenError('GUARD_REPORT_OVERFLOW', `server '${id}' ${overflow.why === 'grew' ? `wrote more than ${overflow.cap} bytes to its module guard's report while it was enrolled (${overflow.bytes} bytes seen), far more than an honest report holds (server-everything's is 55,524 bytes)` : `${tamperedReport(overflow)} while it was enrolled`}: the report counts as tampered with, so nothing was learned from it and the surface was not locked. Find out why the server writes to its file descriptor 4 (the guard's report) before enrolling it again.`);
  const report = launched.guard?.report();
  sayRequiredEsm(id, report?.requireEsm ?? [], say);
  return { ...surface, learned: report?.learned ?? [] };
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
 *  server loaded from outside its package before the second launch, which enforces. `protocol` is the lock's
 *  record (a new server: an offer of revision 2026-07-28 and no flow). `classic` (lock, pin, diff; verify and the
 *  daemon when the lock holds a classic print): over the stateless flow, the classic answer is fetched too, before
 *  the second launch. `hold` (enrollment): the second launch, the last, is left open (`held`) for its holder to end. */
export async function fetchSurface(paths: HomePaths, id: string, protocol: { offered: string; flow?: Flow }, say: (m: string) => void, onLearned?: OnLearned, classic = true, hold = false, observe?: Observed): Promise<Fetched & { held?: HeldSession }> {
  const learn = onLearned !== undefined;
  const selected = selectedFlow(protocol);
  let speech: Speech = selected === 'probe' ? { flow: 'stateless', offered: protocol.offered, probe: true } : { flow: selected, offered: protocol.offered };
  let full;
  try {
    full = await fetchWith(paths, id, speech, FULL_CAPABILITIES, say, learn, false, observe);
  } catch (err) {
    if (!(err instanceof PreCommitError)) throw err;
    speech = { flow: 'classic', offered: offeredFor('classic') };
    try {
      full = await fetchWith(paths, id, speech, FULL_CAPABILITIES, say, learn, false, observe);
    } catch (classic) {
      // Both flows failed: each refusal is reported (this one here, the classic flow's as the error, its class kept).
      say(`server '${id}' did not confirm revision ${protocol.offered} to server/discover (${err.message}), and the classic flow (initialize) on a fresh launch failed too:`);
      throw classic;
    }
  }
  if (onLearned) await onLearned(full.learned);
  const settled: Speech = { flow: speech.flow, offered: speech.offered };
  // The classic face before the second launch, so that a held second launch runs beside no other launch of the server.
  const face = classic && settled.flow === 'stateless' ? await classicFace(paths, id, say, observe) : undefined;
  const bare = await fetchWith(paths, id, settled, {}, say, false, hold, observe);
  const bareNames = new Set(bare.tools.map((t) => t.name));
  return { ...full, conditional: full.tools.map((t) => t.name).filter((n) => !bareNames.has(n)), handshakes: distinctPrints([full.handshake.print, bare.handshake.print]), bareHandshake: bare.handshake, flow: settled.flow, offered: settled.offered, ...(face ? { classic: face } : {}), ...(bare.held ? { held: bare.held } : {}) };
}

/** The classic initialize result of a server fetched over the stateless flow, for its print only (its tools are
 *  the stateless flow's: SPEC §3.4's recorded flow is the one that fetches the surface). A fresh attested launch
 *  offering 2025-11-25 with client capabilities, then one offering none. When the first is refused (an error
 *  answer such as serveStdio's `legacy: 'reject'`, an exit, no answer, an inadmissible result) the server serves
 *  one era: undefined. A failure of the second, after the first was answered, is the fetch's failure. */
async function classicFace(paths: HomePaths, id: string, say: (m: string) => void, observe?: Observed): Promise<Fetched['classic']> {
  const full = await classicHandshake(paths, id, FULL_CAPABILITIES, say, observe);
  if (full instanceof Error) return undefined;
  const bare = await classicHandshake(paths, id, {}, say, observe);
  if (bare instanceof Error) throw new WardenError('PROTOCOL_FAILURE', `could not fetch the initialize result server '${id}' serves to 2025 clients (it answered one offering capabilities, not one offering none): ${bare.message}.`);
  return { prints: distinctPrints([full.print, bare.print]), full, bare };
}

async function classicHandshake(paths: HomePaths, id: string, capabilities: Record<string, unknown>, say: (m: string) => void, observe?: Observed): Promise<Handshake | Error> {
  const launched = await attestAndLaunch(paths, id, say, undefined, observe ? { observe } : {});
  let noise = 0;
  const counts = (): { nonJsonLines: number; oversizeLines: number; refusedClientLines: number } => ({ nonJsonLines: noise, oversizeLines: 0, refusedClientLines: 0 });
  try {
    const { channel, handshake } = await openAsClient({ serverIn: launched.child.stdin, serverOut: launched.child.stdout, verifyWriter: launched.verifyWriter }, { offered: offeredFor('classic'), clientInfo: loadClientSeen(paths, id) }, capabilities, DEFAULT_CAPS, { ...DEFAULT_CHANNEL_LIMITS, requestTimeoutMs: PROBE_TIMEOUT_MS }, () => noise++);
    channel.end();
    await stopLaunched(paths, id, launched, 'client_eof', counts(), { grace: true, say });
    return handshake;
  } catch (err) {
    // Refused or not understood: this era is not served. Anything else (the process no longer the verified program)
    // ends the launch and the fetch, as in fetchWith.
    const refused = err instanceof ProtocolError || err instanceof InadmissibleError;
    await stopLaunched(paths, id, launched, refused ? 'client_eof' : 'protocol_error', counts(), { grace: refused, say });
    if (refused) return err;
    throw err;
  }
}
