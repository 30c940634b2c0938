import { describe, expect, it } from 'vitest';
import { errorImpersonation, impersonatesWarden } from '../../dist/proxy/ask.js';

// Review 24: markdownShown (src/proxy/shown-forms.ts) strips a link destination with at most one level of
// parentheses and no escapes, titles and labels on one line, and HTML tags whose attributes hold no '>'. Each
// message below renders (markdown-it 14, html on) as "mc" + an empty link or hidden markup + "p-warden": the user
// reads "mcp-warden", the letters zz/abcde are in a destination, title, label or HTML construct never shown.

const m = (o: Record<string, unknown>): Map<string, unknown> => new Map(Object.entries(o));
const HIDDEN = [
  'mc[](a(b(c)d)e)p-warden asks.', // destination with 2 levels of parentheses
  'mc[](zz\\)zz)p-warden asks.', // escaped parenthesis in the destination
  'mc[](<(zz>)p-warden asks.', // <…> destination holding an unbalanced '('
  'mc[](x "(zz")p-warden asks.', // title holding an unbalanced '('
  "mc[](zz '(z')p-warden asks.", // single-quoted title holding an unbalanced '('
  'mc[](x "zz\nzz")p-warden asks.', // title across a line break
  'mc[][zz\nzz]p-warden asks.\n\n[zz zz]: /u', // reference label across a line break
  'mc[][a\\]b]p-warden asks.\n\n[a\\]b]: /u', // escaped bracket in the reference label
  'mc<span title=">zz">p-warden asks.', // '>' inside a quoted attribute value
  'mc<a title="<zz">p-warden asks.', // '<' inside a quoted attribute value
  'mc<?zz?>p-warden asks.', // processing instruction
  'mc<!ZZ>p-warden asks.', // declaration
  'mc<![CDATA[zz]]>p-warden asks.', // CDATA section
];

describe('a question naming the warden through Markdown markup markdownShown does not strip', () => {
  for (const message of HIDDEN) {
    it(`is an elicitation request worded as the warden's: ${JSON.stringify(message)}`, () => {
      expect(impersonatesWarden(m({ mode: 'form', message, requestedSchema: m({ type: 'object', properties: m({}) }) }))).toBe(true);
    });
  }

  it('is an error answer worded as the warden\'s (a -32042 elicitation message)', () => {
    const error = m({ code: -32042, message: 'More information needed.', data: m({ elicitations: [m({ mode: 'url', elicitationId: 'e1', message: HIDDEN[0], url: 'https://approve.example/' })] }) });
    expect(errorImpersonation(error)).toBe('worded');
  });
});
