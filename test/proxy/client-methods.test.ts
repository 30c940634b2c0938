import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { methodRule, requestAction, type SessionState } from '../../src/proxy/client-methods.js';

// The enumerated table of client requests (default deny): a method is relayed only when the table names it and
// the session's state allows it; before the handshake nothing but ping and the gated initialize reaches the
// server, and server/discover never does.

const KNOWN = ['initialize', 'ping', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'tools/call', 'prompts/get', 'resources/read', 'completion/complete', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel', 'server/discover'];
const method = fc.oneof(fc.constantFrom(...KNOWN), fc.string({ maxLength: 30 }), fc.constantFrom('Initialize', 'tools/list ', 'prompts/Get', 'server/Discover', 'tasks/*', 'notifications/initialized', 'sampling/createMessage', '__proto__', 'constructor'));
const state = fc.constantFrom<SessionState>('new', 'initializing', 'open');

describe('requestAction', () => {
  it('relays a request only when the table names it and the state allows it', () => {
    fc.assert(
      fc.property(method, state, (m, s) => {
        const a = requestAction(m, s);
        const rule = methodRule(m);
        if (a.do === 'forward') {
          expect(m === 'ping' || ((rule === 'judged_page' && s !== 'new') || (rule === 'pass' && s === 'open'))).toBe(true);
        }
        if (rule === undefined) expect(a.do).toBe(m === 'ping' ? 'forward' : 'refuse');
        if (m === 'server/discover') expect(a).toEqual({ do: 'answer_discover' });
      }),
    );
  });

  it('before the handshake, relays ping and gates initialize, and nothing else', () => {
    fc.assert(
      fc.property(method, (m) => {
        const a = requestAction(m, 'new');
        const expected = m === 'ping' ? 'forward' : m === 'initialize' ? 'gate_initialize' : m === 'tools/call' ? 'admit_call' : m === 'prompts/get' || m === 'resources/read' ? 'admit_read' : m === 'server/discover' ? 'answer_discover' : 'refuse';
        expect(a.do).toBe(expected);
      }),
    );
  });

  it('refuses initialize while one is judged and after one was released', () => {
    expect(requestAction('initialize', 'initializing')).toEqual({ do: 'refuse', why: 'during_handshake' });
    expect(requestAction('initialize', 'open')).toEqual({ do: 'refuse', why: 'second_initialize' });
    expect(requestAction('prompts/get', 'initializing')).toEqual({ do: 'refuse', why: 'during_handshake' });
    expect(requestAction('prompts/execute', 'open')).toEqual({ do: 'refuse', why: 'unknown_method' });
  });
});
