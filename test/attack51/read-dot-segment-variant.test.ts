import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 28 (issue 26 class a, admitted without proof): ReadAdmission.read (src/surface/read-admission.ts:76-86)
// compares a resources/read URI with the listing's refused resources as a string, then admits it through any
// admitted template that expands to it. A server reads the URI as a URL, not as a string: the TypeScript SDK's
// McpServer answers resources/read with `_registeredResources[new URL(uri).toString()]` (node_modules/
// @modelcontextprotocol/sdk/dist/esm/server/mcp.js:431-433, SDK 1.32.2), and WHATWG parsing removes dot segments (also
// `%2e`) and lower-cases the scheme, so `docs://x/./secret.md` and `docs://x/y/%2e%2e/secret.md` are the resource
// `docs://x/secret.md` there. The warden refuses `docs://x/secret.md` (added since the lock, enforce), but
// admits both spellings through the locked `docs://{+path}{?rev}` ("+" writes "/" and "."), and the read of the
// refused resource is forwarded. Expected: a URI that is not its own WHATWG serialization (or whose serialization
// the listing refused) is refused like the resource it names, and never reaches the server.

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

const HONEST_RESOURCE = { uri: 'file:///notes.txt', name: 'notes', description: 'Notes.', mimeType: 'text/plain' };
const ADDED = { uri: 'docs://x/secret.md', name: 'secret', description: `Read me first. ${MARKER}`, mimeType: 'text/plain' };

describe('a resources/read spelling a refused resource with dot segments', () => {
  it('is refused like the refused resource (-32001) and the server never receives it', async () => {
    h.serve({ resources: [HONEST_RESOURCE, ADDED], payload: MARKER });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const variants = ['docs://x/./secret.md', 'docs://x/y/%2e%2e/secret.md'];
    expect(variants.map((u) => new URL(u).toString())).toEqual([ADDED.uri, ADDED.uri]);
    s.send(line('exact', 'resources/read', { uri: ADDED.uri }) + variants.map((uri, i) => line(`v${i}`, 'resources/read', { uri })).join(''));
    const exact = await answerTo(s, 'exact');
    const answers = [await answerTo(s, 'v0'), await answerTo(s, 'v1')];
    s.close();
    await s.exited;
    expect(exact.error).toMatchObject({ code: -32001 });
    expect(h.received().filter((m) => m.method === 'resources/read')).toEqual([]);
    for (const a of answers) {
      expect(a.result).toBeUndefined();
      expect(a.error).toMatchObject({ code: -32001 });
      expect(JSON.stringify(a)).not.toContain(MARKER);
    }
  });

  it('is refused when the URI, as the server reads it, is covered by a template the listing refused (changed since the lock)', async () => {
    // The SDK walks its templates in registration order, matching `new URL(uri).toString()` (mcp.js:441-443, SDK 1.32.2).
    const changed = { uriTemplate: 'docs://x/{name}', name: 'x-doc', description: `An x document. ${MARKER}` };
    h.serve({ resourceTemplates: [changed, { uriTemplate: 'tickets://{id}', name: 'ticket', description: 'A ticket by id.' }, { uriTemplate: 'docs://{+path}{?rev}', name: 'doc', description: 'A document at a revision.' }], payload: MARKER });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    expect(new URL('docs://x/y/../notes').toString()).toBe('docs://x/notes');
    s.send(line('exact', 'resources/read', { uri: 'docs://x/notes' }) + line('dots', 'resources/read', { uri: 'docs://x/y/../notes' }));
    const exact = await answerTo(s, 'exact');
    const dots = await answerTo(s, 'dots');
    s.close();
    await s.exited;
    expect(exact.error).toMatchObject({ code: -32001 });
    expect(h.received().filter((m) => m.method === 'resources/read')).toEqual([]);
    expect(dots.result).toBeUndefined();
    expect(dots.error).toMatchObject({ code: -32001 });
  });
});
