import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawSession, answerTo, envelope, hostileHome, modernLine, parsed, type Sdk2Home } from './helpers.js';

// Issue 27 item 3, red team: in the modern era a list change reaches a client only on a subscription it opened
// with subscriptions/listen, after the server's acknowledgement, stamped with that subscription's id. A
// notification without a subscription id (the 2025 unsolicited form) or with the id of a subscription this
// client never opened answers nothing the client waits for, and never reaches it; the one of its own
// subscription does, after the warden re-listed and judged.

let h: Sdk2Home;
beforeAll(() => {
  h = hostileHome('subs');
});
afterAll(() => h.cleanup());

const SUB = 'io.modelcontextprotocol/subscriptionId';
const changed = (params: Record<string, unknown>): Record<string, unknown> => ({ method: 'notifications/tools/list_changed', params });

describe('list_changed notifications in a modern session', () => {
  it('only the one stamped with the subscription the client opened reaches it; unsolicited and foreign ones do not', async () => {
    h.scenario({
      notify: [
        changed({}), // no subscription
        changed({ _meta: { [SUB]: 'listen:7' } }), // another one's id
        changed({ _meta: { [SUB]: 'listen:1' } }), // the client's own
      ],
    });
    const s = new RawSession(h.home, 'subs');
    try {
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 'listen:1', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { toolsListChanged: true } } }) + '\n');
      await s.until(() => parsed(s).some((m) => m.method === 'notifications/subscriptions/acknowledged' || m.id === 'listen:1'), 'the acknowledgement');
      expect(parsed(s)).toContainEqual(expect.objectContaining({ method: 'notifications/subscriptions/acknowledged' }));
      s.send(modernLine(1, 'tools/list'));
      await answerTo(s, 1);
      s.send(modernLine(2, 'tools/call', { name: 'poke', arguments: {} }));
      await answerTo(s, 2);
      await s.until(() => parsed(s).some((m) => m.method === 'notifications/tools/list_changed'), 'the list change of the own subscription');
      s.send(modernLine(3, 'tools/list'));
      await answerTo(s, 3);
    } finally {
      s.close();
      await s.exited;
    }
    const notes = parsed(s).filter((m) => m.method === 'notifications/tools/list_changed');
    expect(notes).toEqual([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUB]: 'listen:1' } } }]);
  });

  it('a session with no subscription receives no list change at all', async () => {
    h.scenario({ notify: [changed({}), changed({ _meta: { [SUB]: 'listen:1' } })] });
    const s = new RawSession(h.home, 'subs');
    try {
      s.send(modernLine(1, 'tools/list'));
      expect((await answerTo(s, 1)).result).toBeDefined();
      s.send(modernLine(2, 'tools/call', { name: 'poke', arguments: {} }));
      expect((await answerTo(s, 2)).result).toMatchObject({ content: [{ type: 'text', text: 'poked' }] });
      // The notifications were written before the answer to poke, so they were read before it.
      s.send(modernLine(3, 'tools/list'));
      expect((await answerTo(s, 3)).result).toBeDefined();
    } finally {
      s.close();
      await s.exited;
    }
    expect(parsed(s).filter((m) => m.method !== undefined)).toEqual([]);
  });
});
