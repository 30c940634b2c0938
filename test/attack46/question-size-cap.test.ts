import { describe, expect, it } from 'vitest';
import { errorImpersonation, questionImpersonation } from '../../dist/proxy/ask.js';

// Review 23 (caps on hostile-driven work): an error answer's strings are read within bounds (ERROR_WALK: depth
// 16, 2048 strings, 256 KiB; beyond them 'too_large', refused), but a server's elicitation/create params
// (server-relay.ts) and an input_required result's inputRequests/requestState (modern-session.ts) go through
// questionImpersonation, which collects every string at any size and decodes each in up to 9 shown forms, each
// folded in up to 4 unhomoglyph/NFKD passes. Measured on this build (node 24, process.cpuUsage, one call):
// an elicitation/create whose message is '%41&amp;' repeated to the 4 MiB line cap: 3,143 ms CPU, peak RSS
// ~550 MB, and not refused, so a server may send them back to back, stalling every session message of the
// warden's one thread (the same text in a 256 KiB error: 87 ms). The test uses a plain 300 KiB string (cheap: no
// escape to decode) and asks for review 21's bound on the question road too.

const m = (o: Record<string, unknown>): Map<string, unknown> => new Map(Object.entries(o));

describe('a server question larger than the error walk\'s bound', () => {
  it('is refused as too large to read (as an error answer of the same size is), not read at any size', () => {
    const message = 'Please confirm. '.repeat((300 * 1024) / 16);
    expect(errorImpersonation(m({ code: 1, message }))).toBe('too_large');
    const why: string | undefined = questionImpersonation(m({ mode: 'form', message, requestedSchema: m({ type: 'object', properties: m({}) }) }));
    expect(why).toBe('too_large');
  });

  it('is refused as too large when its strings are many (over 2048), as an error answer\'s are', () => {
    const properties = m(Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f${i}`, m({ type: 'string' })])));
    const why: string | undefined = questionImpersonation(m({ mode: 'form', message: 'Fill in.', requestedSchema: m({ type: 'object', properties }) }));
    expect(why).toBe('too_large');
  });
});
