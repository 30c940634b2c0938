import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { MODERN_REVISION } from '../proxy/era.js';
import { ABSENT } from '../surface/hash.js';
import { entryFor, surfaceHash, type LockEntry } from '../surface/lockfile.js';
import { wardenEntryFor } from '../surface/warden-lock.js';
import type { ToolPrint } from '../surface/print.js';
import { loadLocks, saveLockEntry } from '../store/locks.js';
import type { HomePaths } from '../store/paths.js';
import { loadServers, serverById, type ServerConfig } from '../store/servers.js';
import { artifactRecords } from './attested-launch.js';
import { fetchSurface, type Fetched, type HeldSession, type OnLearned } from './surface-fetch.js';
import { escaped } from '../escape.js';
import type { FindingCode } from '../scan/rules.js';
import type { Observed } from '../sandbox/observe.js';
import { gateFindings, lockedForms, scanServed } from './surface-scan.js';
import { distinctPrints, type HandshakePrint } from '../surface/handshake-print.js';
import { requireReviewed, type ReviewWords } from './review.js';

// Capturing a server's surface into tools.lock and warden.lock, for `lock`, `pin`, enrollment and `npm start`:
// fresh attested launches (surface-fetch.ts), then the entry written (read-modify-write under the locks' file
// lock, store/locks.ts), and the act audited.

const say = (m: string): void => void process.stderr.write(`mcp-warden: ${escaped(m)}\n`);

function artifactsOf(fetched: Fetched): { kind: string; path: string; sha256: string }[] {
  return artifactRecords(fetched.plan).map(({ kind, path, sha256 }) => ({ kind, path, sha256 }));
}

function write(paths: HomePaths, id: string, entry: LockEntry, fetched: Fetched, prints: { name: string; print: ToolPrint }[]): Promise<void> {
  // The prints of the initialize result are those of the forms the first-trust scan read (lockedForms), no other.
  const forms = lockedForms(fetched);
  const printsOf = (classic: boolean): HandshakePrint[] => distinctPrints(forms.filter((f) => f.classic === classic).map((f) => f.handshake.print));
  return saveLockEntry(paths, id, () => ({ entry, extra: wardenEntryFor(artifactsOf(fetched), prints, fetched.conditional, fetched.catalogs, printsOf(false), fetched.classic ? printsOf(true) : undefined) }));
}

/** Captures and writes the lock entry of a server (used by `lock` and by `add`), once the first-trust scan of
 *  what it served passed (`accept`: the codes of high-severity findings the operator accepted). `onLocked`
 *  (enrollment): the fetch's last launch is held open and handed over once the entry is written, for the canary
 *  baselines (docs/adr/0061); it is ended here when anything before fails, and after `onLocked` in any case. */
export async function captureLock(paths: HomePaths, id: string, source: 'lock' | 'pin', onLearned?: OnLearned, accept: readonly FindingCode[] = [], retry?: string, review?: ReviewWords, onLocked?: (held: HeldSession) => Promise<void>, observe?: Observed): Promise<LockEntry> {
  const server = serverById(loadServers(paths), id, paths);
  const previous = loadLocks(paths).tools.get(id);
  // A locked server is fetched over the flow its entry records; a new one is probed with server/discover first
  // (docs/adr/0046).
  const fetched = await fetchSurface(paths, id, previous?.protocol ?? { offered: MODERN_REVISION }, say, onLearned, true, onLocked !== undefined, observe);
  try {
    // A pin accepts only what diff showed (review.ts), an upgrade what it showed (`review`); a first lock has nothing
    // to compare with.
    const reviewed = (source === 'pin' || review) && previous ? requireReviewed(paths, id, previous, fetched, undefined, review) : undefined;
    await gateFindings(paths, id, source, scanServed(paths, id, fetched), accept, server.posture, say, retry);
    const entry = entryFor(server.command, server.args, fetched.offered, fetched.handshake, fetched.tools, fetched.flow);
    await write(paths, id, entry, fetched, fetched.tools);
    reviewed?.();
    await appendAudit(paths.audit, { event: 'surface', server: id, source, pinState: previous ? 'changed' : 'unpinned', surfaceHash: entry.surface_hash, ...(previous ? { lockedSurfaceHash: previous.surface_hash, lockedRevision: previous.protocol.era } : {}), revision: entry.protocol.era, changed: [] });
    if (onLocked && fetched.held) await onLocked(fetched.held);
    return entry;
  } finally {
    // The fetch succeeded: a session not handed over (or handed over and left open) ends as a client's end.
    await fetched.held?.end('client_eof', true);
  }
}

/** Accepts the served form of one tool of a locked server (or drops it from the lock when the server no longer
 *  lists it): 'pinned' or 'removed'. */
export async function pinTool(paths: HomePaths, id: string, tool: string, server: ServerConfig, locked: LockEntry, accept: readonly FindingCode[] = []): Promise<'pinned' | 'removed'> {
  const fetched = await fetchSurface(paths, id, locked.protocol, say);
  const live = fetched.tools.find((t) => t.name === tool);
  const reviewed = requireReviewed(paths, id, locked, fetched, tool);
  // Only the tool pinned is taken: only it is scanned (the rest of the surface stays as locked).
  if (live) await gateFindings(paths, id, 'pin', scanServed(paths, id, { handshake: { ...fetched.handshake, members: new Map(), instructions: undefined }, tools: [live], servedCatalogs: {} }), accept, server.posture, say);
  // The entry is rebuilt from the lock as read under its lock, so a concurrent pin of another tool is kept.
  let entry = locked;
  await saveLockEntry(paths, id, (locks) => {
    const current = locks.tools.get(id);
    if (!current) throw new WardenError('LOCK_MISSING', `tools.lock has no entry for server '${id}'. Capture one with: mcp-warden lock ${id}`);
    const tools = current.tools.filter((t) => t.name !== tool);
    if (live) tools.push({ name: live.name, h_desc: live.hDesc, h_schema: live.hSchema, h_tool: live.hTool, tool: live.value });
    else if (tools.length === current.tools.length) throw new WardenError('USAGE', `server '${id}' neither lists nor locks a tool named "${tool}".`);
    tools.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    entry = { ...current, target: server.command, args: server.args, tools, surface_hash: surfaceHash(current.protocol.era, current.h_instructions ?? ABSENT, tools) };
    // Keep the exact prints of every tool not re-pinned; take the live one for the tool that is.
    const previous = locks.warden.get(id);
    const prints = Object.entries(previous?.tools ?? {}).filter(([n]) => n !== tool).map(([name, print]) => ({ name, print }));
    if (live) prints.push({ name: live.name, print: live.print });
    // Pinning a tool accepts that tool only: the catalogs and the initialize result stay as locked.
    return { entry, extra: wardenEntryFor(artifactsOf(fetched), prints, fetched.conditional, previous?.catalogs ?? {}, previous?.handshake, previous?.classicHandshake) };
  });
  reviewed();
  await appendAudit(paths.audit, { event: 'surface', server: id, source: 'pin', pinState: 'changed', surfaceHash: entry.surface_hash, lockedSurfaceHash: locked.surface_hash, revision: entry.protocol.era, changed: [{ name: tool, state: live ? 'changed' : 'removed', classes: [], fields: [] }] });
  return live ? 'pinned' : 'removed';
}
