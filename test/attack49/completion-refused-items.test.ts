import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawSession } from '../helpers/warden.js';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 26 (issue 26, the exceptions to byte equality): completion/complete is relayed as "carrying no surface"
// (proxy/client-methods.ts 'pass', response-shape.ts keeps its `completion` member whole), but the exception is
// not bound to the item it completes. A prompt the session refuses (changed since the lock, enforce) cannot be
// got, yet the client's completion/complete for that prompt's arguments, or for a changed resource template's,
// is forwarded to the server and the server's values about the refused item reach the client. The exact
// relation would be: a completion is relayed only for a ref the read gate admits (surface/read-admission.ts).

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

async function opened(): Promise<RawSession> {
  const s = h.session();
  s.send(initialize(1));
  expect((await answerTo(s, 1)).result).toBeDefined();
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return s;
}

const complete = (id: string, ref: Record<string, unknown>): string => line(id, 'completion/complete', { ref, argument: { name: 'who', value: 'a' } });

describe('completion/complete for an item the session refuses', () => {
  it('is refused like the get of a changed prompt, and never reaches the server', async () => {
    h.serve({ prompts: [{ name: 'greet', description: `Greets the user. ${MARKER}`, arguments: [{ name: 'who', required: false }] }] });
    const s = await opened();
    s.send(line('g', 'prompts/get', { name: 'greet' }) + complete('c', { type: 'ref/prompt', name: 'greet' }));
    expect((await answerTo(s, 'g')).error).toMatchObject({ code: -32001 });
    const answer = await answerTo(s, 'c');
    s.close();
    await s.exited;
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32001 });
    expect(h.received().map((m) => m.method)).not.toContain('completion/complete');
  });

  it('is refused for a prompt no listing of the session showed, and for a changed resource template', async () => {
    h.serve({ resourceTemplates: [{ uriTemplate: 'tickets://{id}', name: 'ticket', description: `A ticket by id. ${MARKER}` }] });
    const s = await opened();
    s.send(complete('u', { type: 'ref/prompt', name: 'never-listed' }) + complete('t', { type: 'ref/resource', uri: 'tickets://{id}' }));
    const unlisted = await answerTo(s, 'u');
    const template = await answerTo(s, 't');
    s.close();
    await s.exited;
    expect(unlisted.error).toMatchObject({ code: -32001 });
    expect(template.error).toMatchObject({ code: -32001 });
    expect(h.received().map((m) => m.method)).not.toContain('completion/complete');
  });
});
