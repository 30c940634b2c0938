import type { SurfaceDiff, ToolDrift } from './diff.js';
import { printable } from '../escape.js';

// What a session does with a diff (docs/adr/0007-drift-posture.md):
// - widening is blocked in every posture;
// - enforce (the default) refuses drifted tools, hides added ones until pinned, and refuses the whole
//   server when its instructions changed, or the rest of its initialize result is not proven equal to the lock
//   (changed, or no print of it locked: docs/adr/0045-handshake-surface.md);
// - monitor reports and allows everything but widening;
// - annotations that only moved toward a more-gated claim are reported and allowed in both.

export type Posture = 'enforce' | 'monitor';

export type ToolDecision = 'allow' | 'refuse' | 'hide';

/** Why the whole server is refused, as a stable code and the top-level members that changed (a session's client
 *  is told it in the warden's words only: proxy/refusal-text.ts). */
export interface ServerRefusal {
  code: 'instructions_changed' | 'handshake_unlocked' | 'handshake_changed' | 'not_locked';
  fields?: readonly string[];
}

export interface Decisions {
  /** Set when the whole server is refused (the session is closed): the detail, for the operator. */
  serverRefusal: string | undefined;
  /** The same refusal as a code. */
  refusal: ServerRefusal | undefined;
  /** Decision per live tool name (removed tools are not listed). */
  tools: Map<string, { decision: ToolDecision; drift: ToolDrift }>;
  pinState: 'unpinned' | 'matched' | 'changed';
}

function decideTool(d: ToolDrift, posture: Posture): ToolDecision {
  if (d.state === 'matched') return 'allow';
  if (d.state === 'added') return posture === 'enforce' ? 'hide' : 'allow';
  if (d.widening.length > 0) return 'refuse';
  if (d.narrowingOnly) return 'allow';
  return posture === 'enforce' ? 'refuse' : 'allow';
}

export function decide(diff: SurfaceDiff, posture: Posture): Decisions {
  const tools = new Map<string, { decision: ToolDecision; drift: ToolDrift }>();
  for (const d of diff.tools) if (d.state !== 'removed') tools.set(d.name, { decision: decideTool(d, posture), drift: d });
  const drifted = diff.instructionsChanged || diff.handshake.state !== 'matched' || diff.tools.some((t) => t.state !== 'matched');
  const refusal = posture === 'enforce' ? refusalOf(diff) : undefined;
  return {
    serverRefusal: refusal && serverRefusal(diff),
    refusal,
    tools,
    pinState: drifted ? 'changed' : 'matched',
  };
}

/** Members named in a refusal; past it, a count. */
const NAMED_MEMBERS = 8;

function refusalOf(diff: SurfaceDiff): ServerRefusal | undefined {
  if (diff.instructionsChanged) return { code: 'instructions_changed' };
  if (diff.handshake.state === 'unlocked') return { code: 'handshake_unlocked' };
  if (diff.handshake.state === 'changed') return { code: 'handshake_changed', fields: diff.handshake.fields };
  return undefined;
}

function serverRefusal(diff: SurfaceDiff): string | undefined {
  if (diff.instructionsChanged) return 'its instructions changed since they were locked';
  const { state, fields } = diff.handshake;
  if (state === 'unlocked') return "warden.lock holds no print of its initialize result (its serverInfo, capabilities and other members: an entry taken before mcp-warden locked them), so nothing proves what the client would be shown; review what it serves with 'mcp-warden diff', then accept it with 'mcp-warden pin'";
  if (state === 'changed') {
    const named = fields.slice(0, NAMED_MEMBERS).map((f) => printable(f)).join(', ');
    const more = fields.length > NAMED_MEMBERS ? ` and ${fields.length - NAMED_MEMBERS} more` : '';
    return `its initialize result changed since it was locked (member${fields.length === 1 ? '' : 's'} ${named}${more})`;
  }
  return undefined;
}

/** Decisions for a server that has no lock entry: refused in enforce, everything allowed in monitor. */
export function decideUnpinned(names: string[], posture: Posture, serverId: string): Decisions {
  const tools = new Map<string, { decision: ToolDecision; drift: ToolDrift }>();
  for (const name of names) tools.set(name, { decision: 'allow', drift: { name, state: 'added', classes: ['added'], fields: [], widening: [], narrowingOnly: false } });
  return {
    serverRefusal: posture === 'enforce' ? `it has no entry in tools.lock; review its tools and run 'mcp-warden lock ${serverId}'` : undefined,
    refusal: posture === 'enforce' ? { code: 'not_locked' } : undefined,
    tools,
    pinState: 'unpinned',
  };
}
