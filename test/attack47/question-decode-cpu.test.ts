import { describe, expect, it } from 'vitest';
import { questionImpersonation } from '../../dist/proxy/ask.js';

// Review 24: within the walk's bound (256 KiB of strings), a message of escapes that stay escapes for every
// decoding round ("&amp;amp;amp;amp;#1;%25252525": each of ROUNDS=4 rounds undoes one layer) makes shownForms keep
// its most forms (up to 18), each folded by foldedForName's unhomoglyph/NFKD passes and read by markdownShown:
// ~170-210 ms CPU per elicitation request on one core (markdownShown's regexes alone stay under 10 ms; no ReDoS),
// repeatable at line rate by a server. The same held for 2,047 strings of ~128 chars (~200 ms).

const m = (o: Record<string, unknown>): Map<string, unknown> => new Map(Object.entries(o));
const N = 256 * 1024 - 'message'.length - 'mode'.length - 'form'.length;
const UNIT = '&amp;amp;amp;amp;#1;%25252525';

describe('an elicitation request of layered escapes at the walk bound', () => {
  it('is decided in under 100 ms CPU', () => {
    const message = UNIT.repeat(Math.ceil(N / UNIT.length)).slice(0, N);
    const params = m({ mode: 'form', message });
    questionImpersonation(m({ message: 'warm up &amp; %25' }));
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const before = process.cpuUsage();
      const found = questionImpersonation(params);
      const used = process.cpuUsage(before);
      expect(found).not.toBe('too_large');
      best = Math.min(best, (used.user + used.system) / 1000);
    }
    expect(best).toBeLessThan(100);
  });
});
