import fc from 'fast-check';
import { readJson } from '../../src/protocol/json/reader.js';
import { admitTool, DEFAULT_CAPS } from '../../src/surface/admit.js';
import { diffSurface, type ToolDrift } from '../../src/surface/diff.js';
import { entryFor, parseToolsLock, renderToolsLock } from '../../src/surface/lockfile.js';
import { decide, type Posture, type ToolDecision } from '../../src/surface/posture.js';
import { bareHandshake } from './handshake.js';

// Generated tools for the property tests of the surface judge's hint rules (test/surface/narrowing.test.ts,
// hint-values.test.ts): a tool is a spec rendered to raw JSON text, so numbers keep their digits and key order
// is chosen. A lock of a tool goes through a tools.lock render and parse (numbers as doubles there) with the
// warden.lock print beside it, as `lock` writes them.

export type Raw = string; // a JSON value as raw text, so numbers keep their digits
export const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
export type HintKey = (typeof HINTS)[number];
export const GATED: Record<HintKey, boolean> = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

export interface ToolSpec {
  description: string;
  propType: string;
  maximum: Raw;
  propDescription: string;
  hints: Partial<Record<HintKey, Raw>>;
  annotationsExtra: [string, Raw][];
  top: [string, Raw][];
  reversed: boolean;
  /** No annotations member at all (not even {}). */
  noAnnotations?: true;
}

const HS = bareHandshake('2025-11-25', { name: 's' });

export function render(t: ToolSpec): string {
  const ann: [string, Raw][] = [...HINTS.flatMap((h): [string, Raw][] => (t.hints[h] !== undefined ? [[h, t.hints[h] as Raw]] : [])), ...t.annotationsExtra];
  const schema = `{"type":"object","properties":{"p":{"type":${JSON.stringify(t.propType)},"description":${JSON.stringify(t.propDescription)}}},"maximum":${t.maximum}}`;
  const members: [string, Raw][] = [['name', '"t"'], ['description', JSON.stringify(t.description)], ['inputSchema', schema], ...(t.noAnnotations ? [] : [['annotations', obj(t.reversed ? [...ann].reverse() : ann)] as [string, Raw]]), ...t.top];
  return obj(t.reversed ? members.reverse() : members);
}
const obj = (m: [string, Raw][]): string => `{${m.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
const admit = (text: string) => admitTool(readJson(text), 0, DEFAULT_CAPS);

/** The drift of `live` against a lock of `locked`, and the decision in each posture. */
export function judge(locked: string, live: string): { drift: ToolDrift; decision: Record<Posture, ToolDecision | undefined> } {
  const lockedTool = admit(locked);
  const entry = parseToolsLock(renderToolsLock(new Map([['s', entryFor('/bin/s', [], '2025-11-25', HS, [lockedTool])]]))).get('s');
  if (!entry) throw new Error('no entry');
  const diff = diffSurface(entry, { prints: { t: lockedTool.print } }, HS, [admit(live)]);
  const drift = diff.tools[0] as ToolDrift;
  return { drift, decision: { enforce: decide(diff, 'enforce').tools.get('t')?.decision, monitor: decide(diff, 'monitor').tools.get('t')?.decision } };
}

export const text = fc.string({ maxLength: 12 });
const lexeme = fc.constantFrom('10', '9007199254740993', '9007199254740992', '0.1', '1.0000000000000000001', '1e2');
const hintValue = fc.constantFrom<Raw | undefined>(undefined, 'true', 'false');
export const other = fc.constantFrom<Raw>('"x"', '1', 'null', '{"a":[true]}', '"mcp-warden"');

/** A locked tool with at least one hint at its less-gated literal (so that it can be narrowed). */
export const lockedSpec: fc.Arbitrary<ToolSpec> = fc
  .record({
    description: text,
    propType: fc.constantFrom('string', 'integer'),
    maximum: lexeme,
    propDescription: text,
    hints: fc.record({ readOnlyHint: hintValue, destructiveHint: hintValue, idempotentHint: hintValue, openWorldHint: hintValue }),
    annotationsExtra: fc.option(text.map((s): [string, Raw][] => [['title', JSON.stringify(s)]]), { nil: undefined }),
    top: fc.constant([] as [string, Raw][]),
    reversed: fc.boolean(),
    forced: fc.constantFrom(...HINTS),
  })
  .map(({ forced, annotationsExtra, hints, ...t }) => {
    const h = Object.fromEntries(Object.entries(hints).filter(([, v]) => v !== undefined)) as Partial<Record<HintKey, Raw>>;
    h[forced] = String(!GATED[forced]);
    return { ...t, hints: h, annotationsExtra: annotationsExtra ?? [] };
  });

export const lessGated = (t: ToolSpec): HintKey[] => HINTS.filter((h) => t.hints[h] === String(!GATED[h]));

