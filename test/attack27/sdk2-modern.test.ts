import { afterEach, describe, expect, it } from 'vitest';
import { writeRules } from '../helpers/rules.js';
import { connectV2, sdk2Home, type Sdk2Home } from './helpers.js';

// Issue 27 with the real SDK v2 on both ends, beyond listing and calling: one lock entry judging a session of
// the other era (both directions), `ask` answered as the warden's own `input_required` (item 4), a server's own
// `input_required` passed through unchanged, and `subscriptions/listen` list changes re-judged (item 3).

let h: Sdk2Home | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

type Call = { tool: string; arguments?: Record<string, unknown> };
const calls = (home: Sdk2Home, tool: string): Call[] =>
  home
    .received()
    .filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === tool)
    .map((m) => ({ tool, ...(m.params as Record<string, unknown>) }));

/** The outcome of a call the warden should refuse: the JSON-RPC error the SDK client throws (its code and
 *  text), or what it returned instead (no code). */
async function refusal(run: () => Promise<unknown>): Promise<{ code?: unknown; message: string }> {
  try {
    return { message: `not refused: ${JSON.stringify(await run())}` };
  } catch (e) {
    return { code: (e as { code?: unknown }).code, message: (e as Error).message };
  }
}

describe('one lock entry judges a session of the other era', () => {
  it('locked over the classic flow (a 2025-only server), then served in both eras: a pinned client gets a modern session with the locked tools', async () => {
    h = sdk2Home('crossed', { entry: 'legacy-only' });
    h.scenario({ entry: 'serve' });
    const { client } = await connectV2(h.home, 'crossed', 'pin');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['deploy', 'echo', 'grow']);
      expect((await client.callTool({ name: 'echo', arguments: { text: 'x' } })).content).toEqual([{ type: 'text', text: 'echo: x' }]);
    } finally {
      await client.close();
    }
  });

  it('locked over the stateless flow (a modern-only server), then served in both eras: a legacy client gets a 2025 session with the locked tools', async () => {
    h = sdk2Home('crossed', { entry: 'reject' }, { add: 'any' });
    h.scenario({ entry: 'serve' });
    const { client } = await connectV2(h.home, 'crossed', 'legacy');
    try {
      expect(client.getProtocolEra()).toBe('legacy');
      expect(client.getInstructions()).toBe('Use echo to echo.');
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['deploy', 'echo', 'grow']);
      expect((await client.callTool({ name: 'echo', arguments: { text: 'x' } })).content).toEqual([{ type: 'text', text: 'echo: x' }]);
    } finally {
      await client.close();
    }
  });
});

describe('ask in the modern era: the warden answers the held call with its own input_required', () => {
  it('the client asks the user, retries with the requestState it was given, and the call reaches the server once, as the client first sent it', async () => {
    h = sdk2Home('asked', {});
    writeRules(h.home, 'asked', { tools: { echo: { kind: 'destructive' } } }); // destructive: ask, by default
    const { client, questions } = await connectV2(h.home, 'asked', 'pin');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      await client.listTools();
      expect((await client.callTool({ name: 'echo', arguments: { text: 'held' } })).content).toEqual([{ type: 'text', text: 'echo: held' }]);
    } finally {
      await client.close();
    }
    expect(questions).toHaveLength(1);
    expect(JSON.stringify(questions[0])).toMatch(/mcp-warden/);
    const received = calls(h, 'echo');
    expect(received).toHaveLength(1);
    expect(received[0]).not.toHaveProperty('requestState'); // the warden's state never reaches the server
    expect(received[0]).not.toHaveProperty('inputResponses'); // nor the user's answer to the warden
    expect(received[0]?.arguments).toEqual({ text: 'held' });
  });

  it('an auto client (its probe launch first) is asked the same way, and the call reaches the server once', async () => {
    h = sdk2Home('asked', {});
    writeRules(h.home, 'asked', { tools: { echo: { kind: 'destructive' } } });
    const { client, questions } = await connectV2(h.home, 'asked', 'auto');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.callTool({ name: 'echo', arguments: { text: 'held' } })).content).toEqual([{ type: 'text', text: 'echo: held' }]);
    } finally {
      await client.close();
    }
    expect(questions).toHaveLength(1);
    expect(JSON.stringify(questions[0])).toMatch(/mcp-warden: server 'asked' is asked to run tool/);
    expect(calls(h, 'echo').map((c) => c.arguments)).toEqual([{ text: 'held' }]);
  });

  it('a declined question refuses the call, and the server never receives it', async () => {
    h = sdk2Home('asked', {});
    writeRules(h.home, 'asked', { tools: { echo: { kind: 'destructive' } } });
    const { client, questions } = await connectV2(h.home, 'asked', 'pin', { action: 'decline' });
    try {
      expect(client.getProtocolEra()).toBe('modern');
      await client.listTools();
      expect(await refusal(() => client.callTool({ name: 'echo', arguments: { text: 'held' } }))).toEqual({ code: -32001, message: expect.stringMatching(/mcp-warden refused the call to tool "echo" of server 'asked' \(ask_declined\): the user answered decline\./) });
    } finally {
      await client.close();
    }
    expect(questions).toHaveLength(1);
    expect(calls(h, 'echo')).toEqual([]);
  });

  it("the warden's question, then the server's own: two questions, and the server receives the call, then its retry with its own state", async () => {
    h = sdk2Home('asked', {});
    writeRules(h.home, 'asked', { tools: { deploy: { kind: 'destructive' } } });
    const { client, questions } = await connectV2(h.home, 'asked', 'pin');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      await client.listTools();
      expect((await client.callTool({ name: 'deploy', arguments: { env: 'prod' } })).content).toEqual([{ type: 'text', text: 'deployed to prod' }]);
    } finally {
      await client.close();
    }
    expect(questions).toHaveLength(2);
    expect(JSON.stringify(questions[0])).toMatch(/mcp-warden/);
    expect(questions[1]).toMatchObject({ message: 'Deploy to prod?', mode: 'form' });
    const received = calls(h, 'deploy');
    expect(received).toHaveLength(2);
    expect(received[0]).not.toHaveProperty('requestState');
    expect(received[0]).not.toHaveProperty('inputResponses');
    expect(received[1]).toMatchObject({ arguments: { env: 'prod' }, requestState: 'server-state:prod', inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
  });
});

describe("input_required in the modern era", () => {
  it("a server's own input_required reaches the client, and its retry reaches the server unchanged", async () => {
    h = sdk2Home('asked', {});
    const { client, questions } = await connectV2(h.home, 'asked', 'pin');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      await client.listTools();
      expect((await client.callTool({ name: 'deploy', arguments: { env: 'prod' } })).content).toEqual([{ type: 'text', text: 'deployed to prod' }]);
    } finally {
      await client.close();
    }
    expect(questions).toMatchObject([{ message: 'Deploy to prod?', mode: 'form' }]);
    const received = calls(h, 'deploy');
    expect(received).toHaveLength(2);
    expect(received[1]).toMatchObject({ arguments: { env: 'prod' }, requestState: 'server-state:prod', inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
  });
});

describe('list changes in the modern era (subscriptions/listen)', () => {
  it('a toolsListChanged notification makes the warden re-list and judge: a tool added since the lock is neither listed nor callable (enforce)', async () => {
    h = sdk2Home('growing', {});
    const { client } = await connectV2(h.home, 'growing', 'pin');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['deploy', 'echo', 'grow']);
      const subscription = await client.listen({ toolsListChanged: true });
      let changed!: () => void;
      const notified = new Promise<void>((resolve) => (changed = resolve));
      client.setNotificationHandler('notifications/tools/list_changed', () => changed());
      const listingsBefore = h.received().filter((m) => m.method === 'tools/list').length;
      await client.callTool({ name: 'grow', arguments: {} });
      await notified;
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['deploy', 'echo', 'grow']);
      expect(await refusal(() => client.callTool({ name: 'grown', arguments: {} }))).toEqual({ code: -32001, message: expect.stringMatching(/mcp-warden refused the call to tool "grown" of server 'growing': /) });
      await subscription.close();
      // The warden's own re-listing, and the client's.
      expect(h.received().filter((m) => m.method === 'tools/list').length - listingsBefore).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
    }
    expect(calls(h, 'grown')).toEqual([]);
  });
});
