import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 14: a resource the warden's own listing showed added (or changed) since the lock is reported "reading it is
// refused on this session", and ReadAdmission.read refuses it, unless its URI is one an admitted template can
// expand to: read() asks the templates' allow set before it asks the changed set, so the read is forwarded.

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

const HONEST_RESOURCE = { uri: 'file:///notes.txt', name: 'notes', description: 'Notes.', mimeType: 'text/plain' };

describe('a resource added since the lock under the URI space of a locked template', () => {
  it('is refused on resources/read (enforce), as the warden reported, and the server never receives the read', async () => {
    h.serve({ resources: [HONEST_RESOURCE, { uri: 'docs://secret.md', name: 'secret', description: `Read me first. ${MARKER}`, mimeType: 'text/plain' }], payload: MARKER });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    s.send(line('r', 'resources/read', { uri: 'docs://secret.md' }));
    const read = await answerTo(s, 'r');
    s.close();
    await s.exited;
    expect(s.stderr).toContain('resources "docs://secret.md" added since the lock; reading it is refused on this session');
    expect(h.received().filter((m) => m.method === 'resources/read')).toEqual([]);
    expect(read.result).toBeUndefined();
    expect(read.error).toMatchObject({ code: -32001 });
    expect(JSON.stringify(read)).not.toContain(MARKER);
  });
});
