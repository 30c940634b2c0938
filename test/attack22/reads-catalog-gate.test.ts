import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawSession } from '../helpers/warden.js';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from './reads-helpers.js';

// Issue 26, item 3: prompts/get and resources/read are admitted only for an item the warden's own listing of
// this session showed and that matched the lock (an allow set): a server that leaves its capabilities out, or
// lists nothing to the warden, gets every get and read refused. The client's own catalog listings are judged
// like its tools/list pages. Reads through a resource template are admitted by an RFC 6570 match of a template
// that matched the lock.

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

async function closed(s: RawSession): Promise<void> {
  s.close();
  expect((await s.exited).code).toBe(0);
}

const refusal = (method: string, kind: string, item: string, reason: string): Record<string, unknown> => ({
  code: -32001,
  message: `mcp-warden refused ${method} of ${kind} "${item}" of server 'reads': ${reason}. Run 'mcp-warden diff reads' to see why.`,
});
const NOT_LISTED = "not shown by the warden's listing of this session";
const CHANGED = 'changed or added since the lock (enforce)';

describe('admission of prompts/get and resources/read', () => {
  it('admits the locked prompt, resource and template reads of an unchanged server, and passes its listings as sent', async () => {
    h.serve({});
    const s = await opened();
    s.send(line('g', 'prompts/get', { name: 'greet' }) + line('r', 'resources/read', { uri: 'file:///notes.txt' }) + line('t', 'resources/read', { uri: 'tickets://42' }) + line('d', 'resources/read', { uri: 'docs://guide/intro.md?rev=3' }));
    expect(await answerTo(s, 'g')).toMatchObject({ result: { messages: [{ content: { text: 'Say hello.' } }] } });
    expect(await answerTo(s, 'r')).toMatchObject({ result: { contents: [{ uri: 'file:///notes.txt' }] } });
    expect(await answerTo(s, 't')).toMatchObject({ result: { contents: [{ uri: 'tickets://42' }] } });
    expect(await answerTo(s, 'd')).toMatchObject({ result: { contents: [{ uri: 'docs://guide/intro.md?rev=3' }] } });
    s.send(line('lp', 'prompts/list') + line('lr', 'resources/list') + line('lt', 'resources/templates/list') + line('cc', 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'a' } }));
    expect(await answerTo(s, 'lp')).toMatchObject({ result: { prompts: [{ name: 'greet' }] } });
    expect(await answerTo(s, 'lr')).toMatchObject({ result: { resources: [{ uri: 'file:///notes.txt' }] } });
    expect(await answerTo(s, 'lt')).toMatchObject({ result: { resourceTemplates: [{ name: 'ticket' }, { name: 'doc' }] } });
    expect(await answerTo(s, 'cc')).toMatchObject({ result: { completion: { values: ['alice'] } } });
    await closed(s);
  });

  it('refuses a server that leaves prompts and resources out of its capabilities since the lock at the handshake, and forwards no get or read', async () => {
    // Since ADR 0045 the capabilities are part of the locked initialize result: leaving them out is a changed
    // initialize result, and the whole session is refused before any get or read is judged.
    h.serve({ omitCaps: true, payload: MARKER });
    const s = h.session();
    s.send(initialize(1) + line('g', 'prompts/get', { name: 'greet' }) + line('r', 'resources/read', { uri: 'file:///notes.txt' }));
    const answer = await answerTo(s, 1);
    expect(answer.error).toMatchObject({ code: -32001, data: { cause: 'surface_refused', server: 'reads' } });
    expect((answer.error as { message: string }).message).toContain('its initialize result changed since it was locked (member capabilities)');
    s.close();
    expect((await s.exited).code).toBe(3);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(h.received().map((m) => m.method)).not.toContain('prompts/get');
    expect(h.received().map((m) => m.method)).not.toContain('resources/read');
  });

  it('refuses every get and read of a server that leaves prompts and resources out of its capabilities, and forwards none (monitor, where the changed initialize result is released)', async () => {
    h.serve({ omitCaps: true, payload: MARKER }, 'monitor');
    const s = await opened();
    s.send(line('g', 'prompts/get', { name: 'greet' }) + line('r', 'resources/read', { uri: 'file:///notes.txt' }) + line('t', 'resources/read', { uri: 'tickets://42' }));
    expect((await answerTo(s, 'g')).error).toEqual(refusal('prompts/get', 'prompt', 'greet', NOT_LISTED));
    expect((await answerTo(s, 'r')).error).toEqual(refusal('resources/read', 'resource', 'file:///notes.txt', NOT_LISTED));
    expect((await answerTo(s, 't')).error).toEqual(refusal('resources/read', 'resource', 'tickets://42', NOT_LISTED));
    await closed(s);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(h.received().map((m) => m.method)).not.toContain('prompts/get');
    expect(h.received().map((m) => m.method)).not.toContain('resources/read');
  });

  it('refuses every get and read of a server that lists nothing to the warden, and removes the drifted items it then lists to the client', async () => {
    h.serve({
      emptyFirstLists: true,
      payload: MARKER,
      prompts: [{ name: 'greet', description: `Greets the user. ${MARKER}` }],
      resources: [{ uri: 'file:///notes.txt', name: 'notes', description: `Notes. ${MARKER}` }],
      resourceTemplates: [{ uriTemplate: 'tickets://{id}', name: 'ticket', description: `A ticket. ${MARKER}` }],
    });
    const s = await opened();
    s.send(line('g', 'prompts/get', { name: 'greet' }) + line('r', 'resources/read', { uri: 'file:///notes.txt' }) + line('t', 'resources/read', { uri: 'tickets://42' }));
    expect((await answerTo(s, 'g')).error).toEqual(refusal('prompts/get', 'prompt', 'greet', NOT_LISTED));
    expect((await answerTo(s, 'r')).error).toEqual(refusal('resources/read', 'resource', 'file:///notes.txt', NOT_LISTED));
    expect((await answerTo(s, 't')).error).toEqual(refusal('resources/read', 'resource', 'tickets://42', NOT_LISTED));
    s.send(line('lp', 'prompts/list') + line('lr', 'resources/list') + line('lt', 'resources/templates/list'));
    expect(await answerTo(s, 'lp')).toEqual({ jsonrpc: '2.0', id: 'lp', result: { prompts: [] } });
    expect(await answerTo(s, 'lr')).toEqual({ jsonrpc: '2.0', id: 'lr', result: { resources: [] } });
    expect(await answerTo(s, 'lt')).toEqual({ jsonrpc: '2.0', id: 'lt', result: { resourceTemplates: [] } });
    await closed(s);
    expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    expect(h.received().map((m) => m.method)).not.toContain('prompts/get');
  });

  it('refuses a read through a changed template, or of a URI no locked template produces, and keeps the unchanged template', async () => {
    h.serve({
      payload: MARKER,
      resourceTemplates: [
        { uriTemplate: 'tickets://{id}', name: 'ticket', description: `A ticket by id. ${MARKER}` },
        { uriTemplate: 'docs://{+path}{?rev}', name: 'doc', description: 'A document at a revision.' },
      ],
    });
    const s = await opened();
    const reads = { t: 'tickets://42', o: 'other://42', n: 'notes.txt', x: 'tickets://4/2', f: 'tickets://42?x=1' };
    s.send(Object.entries(reads).map(([id, uri]) => line(id, 'resources/read', { uri })).join('') + line('d', 'resources/read', { uri: 'docs://a/b.md' }));
    expect((await answerTo(s, 't')).error).toEqual(refusal('resources/read', 'resource', reads.t, CHANGED));
    for (const id of ['o', 'n'] as const) expect((await answerTo(s, id)).error).toEqual(refusal('resources/read', 'resource', reads[id], NOT_LISTED));
    // Review 28: the changed template is matched laxly (any run of characters per expression), so it covers these.
    for (const id of ['x', 'f'] as const) expect((await answerTo(s, id)).error).toEqual(refusal('resources/read', 'resource', reads[id], CHANGED));
    expect(await answerTo(s, 'd')).toMatchObject({ result: { contents: [{ uri: 'docs://a/b.md', text: MARKER }] } });
    s.send(line('lt', 'resources/templates/list'));
    expect(await answerTo(s, 'lt')).toEqual({ jsonrpc: '2.0', id: 'lt', result: { resourceTemplates: [{ uriTemplate: 'docs://{+path}{?rev}', name: 'doc', description: 'A document at a revision.' }] } });
    await closed(s);
    expect(h.received().filter((m) => m.method === 'resources/read').map((m) => (m.params as { uri: string }).uri)).toEqual(['docs://a/b.md']);
  });

  it('in monitor, admits a changed prompt and says so, and still refuses one the warden\'s listing did not show', async () => {
    h.serve({ prompts: [{ name: 'greet', description: 'Greets the user warmly.' }] }, 'monitor');
    const s = await opened();
    s.send(line('g', 'prompts/get', { name: 'greet' }) + line('u', 'prompts/get', { name: 'unlisted' }));
    expect(await answerTo(s, 'g')).toMatchObject({ result: { messages: [{ content: { text: 'Say hello.' } }] } });
    expect((await answerTo(s, 'u')).error).toEqual(refusal('prompts/get', 'prompt', 'unlisted', NOT_LISTED));
    await closed(s);
    expect(s.stderr).toContain('prompts "greet" changed since the lock; allowed (monitor)');
  });
});

describe('the methods a released session relays', () => {
  it('refuses a method it does not know, naming it, and forwards it to no one', async () => {
    h.serve({});
    const s = await opened();
    s.send(line('x', 'prompts/execute', { name: 'greet' }));
    expect(await answerTo(s, 'x')).toEqual({
      jsonrpc: '2.0',
      id: 'x',
      error: { code: -32001, message: "mcp-warden refused prompts/execute for server 'reads': it is not a request of MCP revision 2025-11-25 that the warden knows how to judge, so it is not relayed." },
    });
    await closed(s);
    expect(h.received().map((m) => m.method)).not.toContain('prompts/execute');
  });
});
