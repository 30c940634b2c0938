import { describe, expect, it } from 'vitest';
import { answersOf, scenarioHome } from '../helpers/scenario-home.js';

// Review 3 of issue 26 (class 1, the fix of test/attack24: src/proxy/response-shape.ts). The threat model claims
// "ping, logging/setLevel and resources/(un)subscribe results as {}" and an envelope "relayed as jsonrpc, id and
// result or error only". The shaping looks only at a result that is an object: a ping or setLevel result that
// is a string or an array is relayed as sent; a response carrying both `result` and `error` keeps both (beside a
// judged tools/list page too); members of a completion/complete result beside `completion` are relayed.
// (test/servers/attack25/result-shapes.mjs)

const h = scenarioHome([{ id: 'rs', server: 'attack25/result-shapes.mjs' }]);

async function session(drift: Record<string, unknown>, requests: Record<string, unknown>[]): Promise<Map<number, Record<string, unknown>>> {
  h.serve(drift);
  const { byId } = await answersOf(h.home, 'rs', requests);
  expect(byId.get(1)?.result).toBeDefined();
  return byId;
}

describe('a response reaches the client only in the shape its method defines', () => {
  it('a ping result that is not an object is relayed as {}', async () => {
    const r = await session({ pingResult: '"MARKER-PING"' }, [{ id: 2, method: 'ping' }]);
    expect(r.get(2)?.result).toEqual({});
  });

  it('a logging/setLevel result that is an array is relayed as {}', async () => {
    const r = await session({ setLevelResult: '["MARKER-SETLEVEL"]' }, [{ id: 3, method: 'logging/setLevel', params: { level: 'info' } }]);
    expect(r.get(3)?.result).toEqual({});
  });

  it('a response with both result and error does not reach the client with both (ping, and a judged tools/list page)', async () => {
    const r = await session({ pingError: { code: 1, message: 'MARKER-PING-ERROR' }, toolsError: { code: 1, message: 'MARKER-TOOLS-ERROR' } }, [{ id: 4, method: 'ping' }, { id: 5, method: 'tools/list' }]);
    expect(Object.keys(r.get(4) ?? {}).filter((k) => k === 'result' || k === 'error')).toHaveLength(1);
    expect(Object.keys(r.get(5) ?? {}).filter((k) => k === 'result' || k === 'error')).toHaveLength(1);
  });

  it('members of a completion/complete result beside "completion" are not relayed', async () => {
    const r = await session({ completionExtra: { instructions: 'MARKER-COMPLETION', _meta: { note: 'MARKER-META' } } }, [{ id: 6, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'a', value: 'b' } } }]);
    expect(Object.keys((r.get(6)?.result ?? { missing: 1 }) as object)).toEqual(['completion']);
  });
});
