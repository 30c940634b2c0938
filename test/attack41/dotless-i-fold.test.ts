import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawThenPing, recorderHome, opened, type Home } from '../attack6/common.js';

// Review 18: protocol/fold.ts models the member-name matching of Go's encoding/json (mark3labs/mcp-go, any Go
// server that binds tool arguments into a struct) as "cut at NUL, ſ as s, then lower case". encoding/json folds a
// non-ASCII rune as unicode.ToUpper(unicode.ToLower(r)) (fold.go appendFoldedName), which also takes the dotless
// "ı" (U+0131: upper case I) and the dotted capital "İ" (U+0130: lower case i) to "I". JavaScript's toLowerCase
// leaves "ı" as it is and makes "İ" two code points ("i̇"), so "kınd" and "kİnd" are no spelling of the denied
// "kind" to the warden, and are "kind" to such a server (the last match wins). The same fold guards the fixed
// parameters, resources/read's "uri", the envelope's "id" and a 2026-07-28 retry's "inputResponses".
//
// test/attack6/common.ts: tool note, "kind" denied and "path" fixed by the operator's rules.

let h: Home;
beforeAll(() => {
  h = recorderHome();
});
afterAll(() => h.cleanup());

const call = (id: number, args: string): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"note","arguments":${args}}}`;

describe("a denied parameter under a spelling Go's encoding/json folds to it", () => {
  it.each([
    ['the dotless i (U+0131), "k\\u0131nd"', 61, '{"text":"a","k\\u0131nd":"system"}', /k\\u0131nd|k\u0131nd/],
    ['the dotted capital I (U+0130), "k\\u0130nd"', 62, '{"text":"a","k\\u0130nd":"system"}', /k\\u0130nd|k\u0130nd/],
  ])('is refused as parameter_denied: %s never reaches the server', async (_what, id, args, sent) => {
    const s = h.session();
    await opened(s);
    const answer = await rawThenPing(s, call(id, args), id);
    s.close();
    await s.exited;
    expect(h.received()).not.toMatch(sent);
    expect(answer?.error).toMatchObject({ code: -32001, data: { reason: 'parameter_denied' } });
  });
});
