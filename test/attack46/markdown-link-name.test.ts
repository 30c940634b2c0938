import { describe, expect, it } from 'vitest';
import { errorImpersonation, impersonatesWarden } from '../../dist/proxy/ask.js';

// Review 23: a client renders an elicitation's message as Markdown (review 22's premise: VS Code's
// MarkdownString, markdown-it). Markdown's own syntax hides letters: a link's destination is not shown, so
// "mc[](x)p-warden" renders as `mc<a href="x"></a>p-warden` (markdown-it 14 and marked both), read by the user as
// "mcp-warden", and "m[c](zz)p-warden" shows "mcp-warden" with the c underlined. foldedForName keeps the
// destination's letters ("mcxpwarden", "mczzpwarden") and shownForms undoes escapes only, no markup.

const m = (o: Record<string, unknown>): Map<string, unknown> => new Map(Object.entries(o));
const HIDDEN = ['Approve this call: mc[](x)p-warden asks.', 'Approve this call: m[c](zz)p-warden asks.', 'Approve: [mcp](x)[](y)[-warden](z) asks.'];

describe('a question naming the warden through Markdown link syntax a client renders', () => {
  it('is an elicitation request worded as the warden\'s (a link destination\'s letters are not shown)', () => {
    for (const message of HIDDEN) {
      expect(impersonatesWarden(m({ mode: 'form', message, requestedSchema: m({ type: 'object', properties: m({}) }) })), message).toBe(true);
    }
  });

  it('is an error answer worded as the warden\'s (a -32042 elicitation message with a hidden link destination)', () => {
    const error = m({ code: -32042, message: 'More information needed.', data: m({ elicitations: [m({ mode: 'url', elicitationId: 'e1', message: HIDDEN[0], url: 'https://approve.example/' })] }) });
    expect(errorImpersonation(error)).toBe('worded');
  });
});
