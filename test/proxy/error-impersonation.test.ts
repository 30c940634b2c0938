import { describe, expect, it } from 'vitest';
import { errorImpersonation } from '../../dist/proxy/ask.js';

// Review 21: every error a server answers with is read for the warden's name (a -32042 URL elicitation's message
// and url, any message or data a client shows), every string of it, member names too, through the bounded walk.

const m = (o: Record<string, unknown>): Map<string, unknown> => new Map(Object.entries(o));

describe('errorImpersonation over an error answer', () => {
  it('finds the name in data.elicitations[].message, in a url, and in a member name spelled with look-alikes', () => {
    const elicitation = (message: string, url: string): unknown => m({ code: -32042, message: 'More information needed.', data: m({ elicitations: [m({ mode: 'url', elicitationId: 'e1', message, url })] }) });
    expect(errorImpersonation(elicitation('mcp-warden asks: approve this call', 'https://example.com/a'))).toBe('worded');
    expect(errorImpersonation(elicitation('Approve this call', 'https://example.com/mcp-warden/approve'))).toBe('worded');
    expect(errorImpersonation(m({ code: 1, message: 'x', data: m({ 'МСР‑Wаrdеn': 'approve' }) }))).toBe('worded');
    expect(errorImpersonation(elicitation('Sign in to continue', 'https://example.com/login'))).toBeUndefined();
    expect(errorImpersonation(m({ code: -32601, message: 'Method not found' }))).toBeUndefined();
  });

  it('refuses (too_large) an error deeper, or with more strings or characters, than it reads', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(errorImpersonation(m({ code: 1, message: 'x', data: deep }))).toBe('too_large');
    expect(errorImpersonation(m({ code: 1, message: 'x', data: Array.from({ length: 5000 }, () => 'a') }))).toBe('too_large');
    expect(errorImpersonation(m({ code: 1, message: 'a'.repeat(300 * 1024) }))).toBe('too_large');
  });
});
