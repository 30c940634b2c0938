import { printable } from '../escape.js';
import type { JsonValue } from '../protocol/json/reader.js';
import type { Handshake } from '../surface/admit.js';
import type { HandshakePrint } from '../surface/handshake-print.js';
import { diffSurface, printsForEra } from '../surface/diff.js';
import { hashOf } from '../surface/hash.js';
import { decide, decideUnpinned, type Decisions } from '../surface/posture.js';
import { lockedExtra } from '../surface/warden-lock.js';
import { SurfaceRefusal, type SessionConfig } from './session-config.js';

// What a session of revision 2026-07-28 judges in place of a handshake (docs/adr/0044-modern-era.md):
// - a client's server/discover result, read as an initialize result (surface/discover.ts), against the entry's
//   instructions and handshake prints, under the session's posture;
// - a connection that never asked server/discover is shown no instructions and no capabilities: its judge takes
//   that half of the surface from the lock (which catalogs the warden lists), and judges every listing;
// - the server's name every result carries in its `_meta` (`io.modelcontextprotocol/serverInfo`, the member the
//   discover print reads as `serverInfo`), against the serverInfo the lock holds.

/** No print: what the judge holds when the lock holds none (it is then 'unlocked' whatever it is). */
const NO_PRINT: HandshakePrint = { hExact: '', fields: {} };

/** The handshake half of the surface as the lock holds it, for a session that received none. */
export function lockedHandshake(cfg: Pick<SessionConfig, 'entry' | 'extra'>, era: string): Handshake {
  const catalogs = cfg.extra?.catalogs;
  return {
    era,
    stateless: true,
    instructions: cfg.entry?.instructions,
    serverInfo: cfg.entry?.server_info ?? {},
    serves: { prompts: catalogs?.prompts !== undefined, resources: catalogs?.resources !== undefined || catalogs?.resourceTemplates !== undefined },
    // Equal to a locked print by construction; with none locked the judge finds the handshake unlocked, as a
    // 2025 session's would be.
    print: cfg.extra?.handshake?.[0] ?? NO_PRINT,
    members: new Map(), // nothing served: nothing to show
  };
}

/** Why a server/discover result is refused (enforce), or undefined; a drift allowed in monitor is reported. */
export function discoverRefusal(cfg: Pick<SessionConfig, 'entry' | 'extra' | 'posture' | 'serverId' | 'report'>, hs: Handshake): SurfaceRefusal | undefined {
  const refused = (d: Decisions): SurfaceRefusal | undefined =>
    d.serverRefusal === undefined ? undefined : new SurfaceRefusal(d.serverRefusal.replace('its initialize result', 'its server/discover result (read as an initialize result)'), d.refusal ?? { code: 'surface_refused' });
  if (!cfg.entry) return refused(decideUnpinned([], cfg.posture, cfg.serverId));
  const diff = diffSurface(cfg.entry, lockedExtra(cfg.extra), hs, []);
  const refusal = refused(decide(diff, cfg.posture));
  if (refusal) return refusal;
  if (diff.instructionsChanged || diff.handshake.state !== 'matched') {
    const what = diff.instructionsChanged ? 'its instructions changed' : diff.handshake.state === 'changed' ? `its capabilities or server info changed (${diff.handshake.fields.map((f) => printable(f)).join(', ')})` : 'warden.lock holds no print of its handshake';
    cfg.report(`server '${cfg.serverId}': server/discover: ${what} since the lock: allowed (monitor). Review with: mcp-warden diff ${cfg.serverId}`);
  }
  return undefined;
}

/** How the serverInfo a 2026-07-28 result carries in its `_meta` stands against the lock: `matched` when its exact
 *  digest is the serverInfo of a print locked for this era (the stateless prints, as a discover result is judged);
 *  otherwise `refused` in enforce (as a 2025 session refuses a changed serverInfo) with the refusal, `allowed` in
 *  monitor. */
export function judgeServerInfo(cfg: Pick<SessionConfig, 'extra' | 'posture'>, info: JsonValue): { state: 'matched' } | { state: 'allowed' } | { state: 'refused'; refusal: SurfaceRefusal } {
  const prints = printsForEra(lockedExtra(cfg.extra), { stateless: true }) ?? [];
  const live = hashOf(info, 'exact');
  if (prints.some((p) => Object.hasOwn(p.fields, 'serverInfo') && p.fields.serverInfo === live)) return { state: 'matched' };
  if (cfg.posture === 'monitor') return { state: 'allowed' };
  const said = prints.length === 0 ? { code: 'handshake_unlocked' as const } : { code: 'handshake_changed' as const, fields: ['serverInfo'] };
  const why = prints.length === 0 ? 'warden.lock holds no print of its server/discover result' : 'the serverInfo in the _meta of its answer is not the one warden.lock holds';
  return { state: 'refused', refusal: new SurfaceRefusal(why, said) };
}
