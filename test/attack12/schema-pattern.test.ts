import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configure, opened, shapeshifter, type Shifter } from '../helpers/surface.js';

// ATTACK (CPU): under the operator's rules, a tool with a denied or fixed parameter is shown without it, and
// rules/input-schema.ts hideParameters first checks that nothing else in the schema names it: every key of a
// `patternProperties` is compiled as a RegExp (`new RegExp(p, 'u')`) and run against the hidden names. The
// patterns are the server's, and V8's engine backtracks: `^(?:(?:.*){9}){9}!$` against "mode" takes ~3 s,
// `{10}` ~8.5 s, `{12}` ~60 s (measured, node 20), each pattern ~25 bytes, all of it while the warden's only
// thread is blocked. A tool may carry any number of them, anywhere a subschema is walked; they are judged at
// the handshake (before the client's initialize is answered), on every re-list and every client tools/list
// page. Only a server with rules that hide a parameter of one of its tools is reached (a documented feature:
// `deny`, `fixed`). Asserts the secure behaviour: the handshake is judged in about the time of a control with
// patterns of the same length that do not backtrack.

const schema = (patterns: string[]): string =>
  `{"type":"object","properties":{"mode":{"type":"string"},"path":{"type":"string"}},"patternProperties":{${patterns.map((p) => `${JSON.stringify(p)}:{"type":"string"}`).join(',')}}}`;
const tools = (patterns: string[]): string => `[{"name":"configure","description":"Configures a thing.","inputSchema":${schema(patterns)}}]`;
const ATTACK = ['^(?:(?:.*){9}){9}!$', '^(?:(?:.*){9}){9}#$'];
const CONTROL = ['^(?:(?:x){9}){9}!$', '^(?:(?:x){9}){9}#$'];

let sh: Shifter;
afterEach(() => sh.cleanup());

async function handshakeMs(): Promise<{ ms: number; answer: Record<string, unknown> }> {
  const s = sh.session();
  const t = performance.now();
  const answer = await opened(s);
  const ms = performance.now() - t;
  s.close();
  await s.exited;
  return { ms, answer };
}

describe('attack12: a server\'s patternProperties run by the rules', () => {
  let control: number;
  beforeEach(async () => {
    sh = shapeshifter({ toolsRaw: tools(CONTROL) });
    configure(sh.home, { rules: { tools: { configure: { kind: 'read', deny: ['mode'] } } } });
    const c = await handshakeMs();
    expect(c.answer.result).toBeDefined();
    control = c.ms;
  });

  it('judges a tool whose patternProperties backtrack in about the time of the control', async () => {
    sh.serve({ toolsRaw: tools(ATTACK) });
    const attack = await handshakeMs();
    console.log(`handshake under rules: control patterns ${control.toFixed(0)} ms; backtracking patterns ${attack.ms.toFixed(0)} ms`);
    expect(attack.answer.id).toBe(1);
    expect(attack.ms).toBeLessThan(control + 1000);
  }, 60_000);
});
