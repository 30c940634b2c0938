import { describe, expect, it } from 'vitest';
import { readJson, type JsonObject } from '../../src/protocol/json/reader.js';
import { foldRefusal } from '../../src/proxy/result-fold.js';

// Review 20: a 2026-07-28 result whose member names a case-insensitive client reads as another is refused whole.

const of = (text: string): string | undefined => foldRefusal(readJson(text) as JsonObject);

describe('a 2026-07-28 result whose member names fold alike', () => {
  it('refuses another spelling of a member the warden reads, at the top level or in _meta, and two members folding alike', () => {
    expect(of('{"ResultType":"input_required"}')).toMatch(/"ResultType".*"resultType"/);
    expect(of('{"requeſtState":"x"}')).toMatch(/"requestState"/);
    expect(of('{"_meta":{},"_Meta":{}}')).toMatch(/"_Meta".*"_meta"/);
    expect(of('{"_meta":{"io.modelcontextprotocol/ServerInfo":{"name":"x"}}}')).toMatch(/_meta carries/);
    expect(of('{"content":[],"Content":[]}')).toMatch(/"Content".*"content"/);
    expect(of('{"_meta":{"a":1,"A":2}}')).toMatch(/_meta carries "A"/);
  });

  it('passes a result whose names are each spelled once', () => {
    expect(of('{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"},"other":1}}')).toBeUndefined();
  });
});
