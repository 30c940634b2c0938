import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../dist/protocol/json/reader.js';
import { completionRef } from '../../dist/proxy/completion.js';
import { malformedAnswer, modernPageKeys, shapedResponse } from '../../dist/proxy/response-shape.js';

// The shaping rules of src/proxy/response-shape.ts read objects (issue 26, eleventh review): what they cannot read
// is named by malformedAnswer (and answered with the warden's refusal by the session), and a `_meta` that is not an
// object is never kept by the shaping itself.

const answer = (result: string): JsonObject => readJson(`{"jsonrpc":"2.0","id":1,"result":${result}}`) as JsonObject;

describe('malformedAnswer', () => {
  it.each([
    ['completion/complete', '"text"'],
    ['completion/complete', '["text"]'],
    ['completion/complete', '7'],
    ['completion/complete', 'null'],
    ['subscriptions/listen', '"text"'],
  ])('names the result of %s when it is %s', (method, result) => {
    expect(malformedAnswer(answer(result), method, false)).toBe('result');
    expect(malformedAnswer(answer(result), method, true)).toBe('result');
  });

  it("names a 2026-07-28 result's _meta that is not an object, on any method; not on a 2025 session (where shaping drops _meta)", () => {
    for (const meta of ['"text"', '["text"]', 'null', '1']) {
      expect(malformedAnswer(answer(`{"content":[],"_meta":${meta}}`), 'tools/call', true)).toBe('_meta');
      expect(malformedAnswer(answer(`{"content":[],"_meta":${meta}}`), 'tools/call', false)).toBeUndefined();
    }
    expect(malformedAnswer(answer('{"content":[],"_meta":{}}'), 'tools/call', true)).toBeUndefined();
  });

  it("names nothing for an error answer, or a method whose result the warden keeps whole (a tool's output), or one named like an Object member", () => {
    expect(malformedAnswer(readJson('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":"x"}') as JsonObject, 'completion/complete', true)).toBeUndefined();
    expect(malformedAnswer(answer('"text"'), 'tools/call', true)).toBeUndefined();
    for (const method of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) expect(malformedAnswer(answer('"text"'), method, false)).toBeUndefined();
  });
});

describe('shapedResponse', () => {
  it("drops a 2026-07-28 page's _meta that is not an object and counts it", () => {
    const shaped = shapedResponse(answer('{"tools":[],"resultType":"complete","_meta":"text"}'), 'tools/list', modernPageKeys(['tools', 'nextCursor']));
    expect(shaped.dropped.result).toEqual(['_meta']);
    expect([...(shaped.value.get('result') as JsonObject).keys()]).toEqual(['tools', 'resultType']);
  });

  it('keeps no member of a result for a method named like an Object member (no rule is inherited)', () => {
    for (const method of ['constructor', 'toString', '__proto__']) {
      const value = answer('{"a":1}');
      expect(shapedResponse(value, method, undefined)).toEqual({ value, dropped: { envelope: [], result: [] } });
    }
  });
});

// Review 26: a completion reaches the client as the revision defines it, and only for an item its ref names.
describe('a completion/complete answer', () => {
  const many = JSON.stringify(Array.from({ length: 101 }, (_, i) => `v${i}`));
  it.each([
    ['values not an array', '{"completion":{"values":"alice"}}'],
    ['a value not a string', '{"completion":{"values":["alice",{"text":"x"}]}}'],
    ['more than 100 values', `{"completion":{"values":${many}}}`],
    ['a value over 1,024 characters', `{"completion":{"values":["${'a'.repeat(1025)}"]}}`],
    ['no completion object', '{"completion":["alice"]}'],
  ])('is refused as unreadable with %s', (_, result) => {
    expect(malformedAnswer(answer(result), 'completion/complete', false)).toBe('completion');
  });

  it('keeps values, an integer total and a boolean hasMore, and drops every other member of the completion', () => {
    const shaped = shapedResponse(answer('{"completion":{"values":["alice"],"total":"12","hasMore":true,"description":"MARKER","Values":["x"]}}'), 'completion/complete', undefined);
    expect(shaped.dropped.result).toEqual(['completion.total', 'completion.description', 'completion.Values']);
    expect(JSON.parse(JSON.stringify(Object.fromEntries((shaped.value.get('result') as JsonObject).get('completion') as JsonObject)))).toEqual({ values: ['alice'], hasMore: true });
    expect(malformedAnswer(answer('{"completion":{"values":["alice"],"total":3,"hasMore":false}}'), 'completion/complete', false)).toBeUndefined();
  });

  it("names its item by a ref of the revision's, read by its fold: another spelling of a ref member names none", () => {
    const params = (ref: string): JsonObject => readJson(`{"ref":${ref},"argument":{"name":"a","value":"b"}}`) as JsonObject;
    expect(completionRef(params('{"type":"ref/prompt","name":"greet"}'))).toEqual({ kind: 'prompts', item: 'greet' });
    expect(completionRef(params('{"type":"ref/resource","uri":"tickets://{id}"}'))).toEqual({ kind: 'resources', item: 'tickets://{id}' });
    for (const ref of ['{"type":"ref/prompt","name":"greet","Name":"other"}', '{"type":"ref/prompt","uri":"greet"}', '{"type":"ref/tool","name":"greet"}', '"greet"']) expect(completionRef(params(ref))).toBeUndefined();
  });
});
