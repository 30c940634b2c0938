import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawThenPing, recorderHome, opened, type Home } from './common.js';

// Attack: a parser differential on member names. The warden reads a client's message with exact, case-sensitive
// keys; Go servers built on encoding/json (mark3labs/mcp-go, modelcontextprotocol/go-sdk before v1.3.1,
// CVE-2026-27896, and any server that binds tool arguments into a struct) match keys case-insensitively, fold
// "ſ" (U+017F) to "s" and "K" (U+212A) to "k", and let the last of two matches win. So a member the warden
// does not recognise is, for such a server, the denied parameter, the arguments, the tool name or the method.
// The warden already refuses case-variants in what the server sends (surface/admit.ts refuseCaseVariants); in
// what the client sends, nothing does. Each line below reaches the server today (it logs every line it gets).
//
// Tools: note (read; "kind" denied, "path" fixed), send (remote-change), secret (unclassified, strict mode).

let h: Home;
beforeAll(() => {
  h = recorderHome();
});
afterAll(() => h.cleanup());

const call = (id: number, params: string, extraTop = ''): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}${extraTop}}`;

describe('a call cannot carry a hidden or withheld name under another spelling', () => {
  it('refuses a call that sends a denied parameter under another case ("KIND")', async () => {
    const s = h.session();
    expect(await opened(s)).not.toContain('secret');
    const answer = await rawThenPing(s, call(50, '{"name":"note","arguments":{"text":"a","KIND":"system"}}'), 50);
    s.close();
    await s.exited;
    expect(h.received()).not.toContain('"KIND"');
    expect(answer?.error).toBeDefined();
  });

  it('refuses a call that sends a denied parameter under a Unicode case fold ("\\u212Aind", the Kelvin sign)', async () => {
    const s = h.session();
    await opened(s);
    const answer = await rawThenPing(s, call(51, '{"name":"note","arguments":{"text":"a","\\u212Aind":"system"}}'), 51);
    s.close();
    await s.exited;
    expect(h.received()).not.toMatch(/\\u212Aind|\u212Aind/);
    expect(answer?.error).toBeDefined();
  });

  it('refuses a call that sets a fixed parameter under another case ("Path")', async () => {
    // With a first-match-wins reader (or one that keeps the client's spelling) the client's path replaces the
    // operator's "/safe"; the question and the audit log both say the path was fixed.
    const s = h.session();
    await opened(s);
    const answer = await rawThenPing(s, call(52, '{"name":"note","arguments":{"text":"a","Path":"/etc"}}'), 52);
    s.close();
    await s.exited;
    expect(h.received()).not.toContain('"Path"');
    expect(answer?.error).toBeDefined();
  });

  it('refuses a call whose params carry a case-variant of "arguments" with a denied parameter in it', async () => {
    // The warden checks {"text":"a"}; encoding/json keeps the last match, {"kind":"system"}.
    const s = h.session();
    await opened(s);
    const answer = await rawThenPing(s, call(53, '{"name":"note","arguments":{"text":"a"},"Arguments":{"kind":"system"}}'), 53);
    s.close();
    await s.exited;
    expect(h.received()).not.toContain('"Arguments"');
    expect(answer?.error).toBeDefined();
  });

  it('refuses a call whose params carry a case-variant of "name" naming a tool the rules withhold', async () => {
    // The warden approves "note"; the Go server runs "secret", unclassified in strict mode (and not listed).
    const s = h.session();
    await opened(s);
    const answer = await rawThenPing(s, call(54, '{"name":"note","arguments":{"text":"a"},"NAME":"secret"}'), 54);
    s.close();
    await s.exited;
    expect(h.received()).not.toContain('"NAME"');
    expect(answer?.error).toBeDefined();
  });

  it('refuses a request whose top-level members carry a case-variant of "params" or "method"', async () => {
    // "Params" replaces the params the warden judged; "Method" turns a ping the warden relays unjudged into a
    // tools/call of the withheld tool. Neither the lock nor the rules see a call at all.
    const s = h.session();
    await opened(s);
    const a = await rawThenPing(s, call(55, '{"name":"note","arguments":{"text":"a"}}', ',"Params":{"name":"secret","arguments":{"cmd":"id"}}'), 55);
    const b = await rawThenPing(s, '{"jsonrpc":"2.0","id":56,"method":"ping","Method":"tools/call","params":{"name":"secret","arguments":{"cmd":"id"}}}', 56);
    const c = await rawThenPing(s, '{"jsonrpc":"2.0","id":57,"method":"tools/list","methoD":"tools/call","params":{"name":"secret","arguments":{"cmd":"id"}}}', 57);
    s.close();
    await s.exited;
    expect(h.received()).not.toMatch(/"Params"|"Method"|"methoD"/);
    expect(a?.error).toBeDefined();
    expect(b?.error).toBeDefined();
    expect(c?.error).toBeDefined();
  });
});

describe('a call cannot carry a denied parameter where a JavaScript server still reads it', () => {
  it('refuses a call whose arguments carry "__proto__" (a denied parameter inside it)', async () => {
    // Attack: {"__proto__":{"kind":"system"}} has no member "kind" for the warden (its Map keeps "__proto__"
    // as a plain key). A JavaScript server that merges arguments over defaults with Object.assign (or reads
    // them through any [[Set]]-based copy) turns the member into the prototype of its options object, and
    // options.kind is "system". The recorder server does exactly that and says which kind it saw.
    const s = h.session();
    await opened(s);
    const answer = await rawThenPing(s, call(58, '{"name":"note","arguments":{"text":"a","__proto__":{"kind":"system"}}}'), 58);
    s.close();
    await s.exited;
    expect(JSON.stringify(answer)).not.toContain('kind=system');
    expect(h.received()).not.toContain('"__proto__"');
    expect(answer?.error).toBeDefined();
  });
});
