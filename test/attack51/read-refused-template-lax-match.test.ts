import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 28 (issue 26 class a; review 14's rule "a URI covered by a template the listing refused is refused even
// when an unchanged template covers it too"): whether a refused template covers a URI is decided with the
// warden's own strict RFC 6570 matcher (src/surface/uri-template.ts: a simple `{name}` writes only unreserved
// characters, "%" escapes and ","), a superset of exact expansions; but a server routes by its own matcher, which
// is laxer. The TypeScript SDK (1.32.2, dist/esm/shared/uriTemplate.js:183-184) matches `{name}` as `([^/,]+)`:
// ":", "@", "!", "'", "(", "*", ";", "=" and any non-ASCII character too, trying templates in registration order
// (server/mcp.js:441-443). So `docs://x/a:b` is not covered by the refused `docs://x/{name}` for the warden, is
// admitted through the locked `docs://{+path}{?rev}` ("+" writes ":"), and an SDK server that registered
// `docs://x/{name}` first answers it from the refused template. Expected: a refused template covers a URI
// whenever any reading of its expressions could (each expression read as any run of characters: fail closed).

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

describe('a resources/read of a URI a refused template matches as an SDK server matches it', () => {
  it('is refused (-32001) and never reaches the server, though the locked {+path} template covers it too', async () => {
    const changed = { uriTemplate: 'docs://x/{name}', name: 'x-doc', description: `An x document. ${MARKER}` };
    h.serve({ resourceTemplates: [changed, { uriTemplate: 'tickets://{id}', name: 'ticket', description: 'A ticket by id.' }, { uriTemplate: 'docs://{+path}{?rev}', name: 'doc', description: 'A document at a revision.' }], payload: MARKER });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    // what the SDK's matcher of the refused template reads these as: a value of {name}
    expect(['docs://x/a:b', "docs://x/it's"].map((u) => new RegExp('^docs://x/([^/,]+)$').test(new URL(u).toString()))).toEqual([true, true]);
    s.send(line('exact', 'resources/read', { uri: 'docs://x/ab' }) + line('colon', 'resources/read', { uri: 'docs://x/a:b' }) + line('quote', 'resources/read', { uri: "docs://x/it's" }));
    const exact = await answerTo(s, 'exact');
    const answers = [await answerTo(s, 'colon'), await answerTo(s, 'quote')];
    s.close();
    await s.exited;
    expect(exact.error).toMatchObject({ code: -32001 });
    expect(h.received().filter((m) => m.method === 'resources/read')).toEqual([]);
    for (const a of answers) {
      expect(a.result).toBeUndefined();
      expect(a.error).toMatchObject({ code: -32001 });
    }
  });
});
