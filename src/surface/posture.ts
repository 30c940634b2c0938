import type { SurfaceDiff, ToolDrift } from './diff.js';

// What a session does with a diff (docs/adr/0007-drift-posture.md):
// - widening is blocked in every posture;
// - enforce (the default) refuses drifted tools, hides added ones until pinned, and refuses the whole
//   server when its instructions changed;
// - monitor reports and allows everything but widening;
// - annotations that only moved toward a more-gated claim are reported and allowed in both.

export type Posture = 'enforce' | 'monitor';

export type ToolDecision = 'allow' | 'refuse' | 'hide';

export interface Decisions {
  /** Set when the whole server is refused (the session is closed). */
  serverRefusal: string | undefined;
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
  const drifted = diff.instructionsChanged || diff.tools.some((t) => t.state !== 'matched');
  return {
    serverRefusal: diff.instructionsChanged && posture === 'enforce' ? 'its instructions changed since they were locked' : undefined,
    tools,
    pinState: drifted ? 'changed' : 'matched',
  };
}

/** Decisions for a server that has no lock entry: refused in enforce, everything allowed in monitor. */
export function decideUnpinned(names: string[], posture: Posture, serverId: string): Decisions {
  const tools = new Map<string, { decision: ToolDecision; drift: ToolDrift }>();
  for (const name of names) tools.set(name, { decision: 'allow', drift: { name, state: 'added', classes: ['added'], fields: [], widening: [], narrowingOnly: false } });
  return {
    serverRefusal: posture === 'enforce' ? `it has no entry in tools.lock; review its tools and run 'mcp-warden lock ${serverId}'` : undefined,
    tools,
    pinState: 'unpinned',
  };
}
