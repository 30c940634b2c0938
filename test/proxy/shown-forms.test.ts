import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorImpersonation, impersonatesWarden, namesWarden, questionImpersonation } from '../../dist/proxy/ask.js';

// Review 22: the name check reads a string in each form a client may show it in (src/proxy/shown-forms.ts):
// percent-escapes and HTML character references undone, in either order and repeated; a named reference the
// warden does not know stands for a few letters; a bidi control is refused outright. Property-tested: the name
// written with any mix of these escapes, letter by letter, is found.

const hex = (ch: string): string => ch.charCodeAt(0).toString(16).padStart(2, '0');
/** Ways of writing one character that a Markdown renderer or a URL parser shows as that character. */
const ESCAPES: ((ch: string) => string)[] = [
  (ch) => ch,
  (ch) => ch.toUpperCase(),
  (ch) => `%${hex(ch)}`,
  (ch) => `%${hex(ch).toUpperCase()}`,
  (ch) => `&#${ch.charCodeAt(0)};`,
  (ch) => `&#x${hex(ch)};`,
  (ch) => `&#X${hex(ch).toUpperCase()};`,
  (ch) => `&#${ch.charCodeAt(0)}`,
  (ch) => `&amp;#${ch.charCodeAt(0)};`,
  (ch) => `%26%23${ch.charCodeAt(0)}%3B`,
  (ch) => `&#37;${hex(ch)}`,
  (ch) => `%25${hex(ch)}`,
  (ch) => (/[a-z]/.test(ch) ? `&${ch}opf;` : '&hyphen;'),
  (ch) => (/[a-z]/.test(ch) ? `&${ch}acute;` : '&#x2011;'),
];
const escapedName = fc
  .tuple(...[...'mcp-warden'].map((ch) => fc.integer({ min: 0, max: ESCAPES.length - 1 }).map((i) => (ESCAPES[i] as (c: string) => string)(ch))))
  .map((parts) => parts.join(''));
const message = (text: string): Map<string, unknown> => new Map<string, unknown>([['mode', 'form'], ['message', text]]);

describe("the name check reads each form a client may show a server's string in", () => {
  it('finds mcp-warden written with any mix of percent-escapes and character references, escaped again or not', () => {
    fc.assert(
      fc.property(fc.constantFrom('', 'Approve: ', 'https://'), escapedName, fc.constantFrom('', ' asks.', '.example/approve'), (before, name, after) => {
        expect(namesWarden(`${before}${name}${after}`), name).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('takes a named reference it does not know for any few letters (&rho; reads as a p)', () => {
    expect(namesWarden('mc&rho;-warden')).toBe(true);
    expect(namesWarden('&Mu;&Chi;&Rho;-warden')).toBe(true);
    expect(impersonatesWarden(message('Ask mcp-&unknownref;rden now'))).toBe(true);
  });

  it('refuses a question or an error holding a bidi control, as written or escaped', () => {
    for (const text of ['Approve: \u202Enedraw-pcm\u202C', 'plain \u2067text\u2069', 'x &#x202E; y', 'x %E2%80%AE y']) {
      expect(impersonatesWarden(message(text)), text).toBe(true);
      expect(errorImpersonation(new Map<string, unknown>([['code', -32000], ['message', text]])), text).toBe('bidi');
    }
  });

  it('lets honest text with escapes through (no name, known references, malformed escapes)', () => {
    for (const text of ['Tom &amp; Jerry &copy; 2026', 'Approve 50% of the items at https://example.com/a%20b', '100%zz &#xZZ; &#; &', 'The &unknown; warder of the garden', 'mcp server &nbsp;&mdash; warden']) {
      expect(impersonatesWarden(message(text)), text).toBe(false);
    }
  });

  it('lets honest Markdown through (links, images, references, code: what a renderer hides names no warden here)', () => {
    for (const text of ['See [the docs](https://example.com/setup) first.', '![logo](x.png) **Pick** one `[ref][1]` [ref][1]\n\n[1]: https://example.com/', 'The [MCP](https://modelcontextprotocol.io) server warden of (a) garden', 'Is a < b? Pick 1 <= x.']) {
      expect(impersonatesWarden(message(text)), text).toBe(false);
    }
  });

  it('finds the name in what Markdown shows when link destinations, reference labels, comments or tags split it (review 23)', () => {
    for (const text of ['mc[](x)p-warden', 'm[c](zz "t")p-warden', 'mc![](a(b))p-warden', 'mc[][x]p-warden', 'mc<!-- x -->p-<i>war</i>den']) {
      expect(impersonatesWarden(message(text)), text).toBe(true);
    }
  });

  it("refuses HTML in a question as 'markup' (review 24: clients hide or show it as they like), not in an error's own message", () => {
    for (const text of ['<b>Pick</b> one', 'Pick <!-- note --> one', 'Open <https://example.com/>', 'x &lt;i&gt; y', 'a <?php ?> b', 'a </p> b']) {
      expect(questionImpersonation(message(text)), text).toBe('markup');
      const elicitation = new Map<string, unknown>([['mode', 'url'], ['message', text], ['url', 'https://approve.example/']]);
      expect(errorImpersonation(new Map<string, unknown>([['code', -32042], ['message', 'm'], ['data', new Map([['elicitations', [elicitation]]])]])), text).toBe('markup');
    }
    expect(errorImpersonation(new Map<string, unknown>([['code', -32603], ['message', 'TypeError: x\n    at f (<anonymous>)'], ['data', new Map([['stack', '<b>at</b> <anonymous>']])]]))).toBeUndefined();
  });
});
