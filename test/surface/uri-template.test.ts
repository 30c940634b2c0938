import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { READ_MATCH_STEPS, uriTemplateMatcher as budgeted } from '../../src/surface/uri-template.js';

/** The relation itself, under a budget no case here reaches (the budget's own test is below). */
const uriTemplateMatcher =
  (template: string) =>
  (uri: string): boolean | 'over' =>
    budgeted(template)(uri, { steps: 50_000_000 });

// The relation by which a resources/read through a template is admitted: the URI is one the template expands to
// (RFC 6570), read so that a value can never carry a character its operator escapes.

/** RFC 6570 simple-string encoding: everything but the unreserved set percent-encoded. */
const enc = (v: string): string => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
/** Reserved expansion: the reserved set stays as it is. */
const encReserved = (v: string): string => encodeURI(v).replace(/%5B/g, '[').replace(/%5D/g, ']');

describe('uriTemplateMatcher', () => {
  it('matches expansions of the forms real servers use, and not a value carrying what its operator escapes', () => {
    const ticket = uriTemplateMatcher('tickets://{id}');
    expect(['tickets://42', 'tickets://a%2Fb', 'tickets://a,b', 'tickets://'].map(ticket)).toEqual([true, true, true, true]);
    expect(['tickets://4/2', 'tickets://42?x=1', 'tickets://42#f', 'ticket://42', 'tickets://%zz', 'tickets:/42'].map(ticket)).toEqual([false, false, false, false, false, false]);
    const doc = uriTemplateMatcher('docs://{+path}{?rev,lang}');
    expect(['docs://a/b.md', 'docs://a/b.md?rev=3', 'docs://a?rev=3&lang=en', 'docs://'].map(doc)).toEqual([true, true, true, true]);
    const segs = uriTemplateMatcher('repo://{owner}{/path*}');
    expect(['repo://me/a/b/c', 'repo://me', 'repo://me/a%2F'].map(segs)).toEqual([true, true, true]);
    expect(segs('repo://m?e')).toBe(false);
    expect(uriTemplateMatcher('x://{.ext}')('x://.tar.gz')).toBe(true);
    expect(uriTemplateMatcher('x://{;a,b}')('x://;a=1;b=2')).toBe(true);
    expect(uriTemplateMatcher('x://{;a,b}')('x://;a=1/2')).toBe(false);
    expect(uriTemplateMatcher('x://{#frag}')('x://#a/b?c')).toBe(true);
    expect(uriTemplateMatcher('x://{id:3}')('x://abc')).toBe(true);
    expect(uriTemplateMatcher('file:///notes.txt')('file:///notes.txt')).toBe(true);
    expect(uriTemplateMatcher('file:///notes.txt')('file:///notes.txt2')).toBe(false);
  });

  it('matches nothing for a template it cannot read or that exceeds its bounds', () => {
    for (const t of ['a{b', 'a}b', 'x://{}', 'x://{a b}', 'x://{a', 'x://{a}}', 'x://{$a}', 'x://' + '{a}'.repeat(33), 'x://' + 'a'.repeat(600)]) {
      expect(uriTemplateMatcher(t)('x://a')).toBe(false);
    }
    expect(uriTemplateMatcher('x://{+a}')('x://' + 'a'.repeat(8193))).toBe(false);
  });

  it('takes linear time on a hostile template and URI (no backtracking)', () => {
    const t = uriTemplateMatcher('x://' + '{a}'.repeat(32) + 'b'.repeat(300));
    const started = performance.now();
    expect(t('x://' + 'a'.repeat(8000) + 'c')).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it(`stops when its budget is spent (${READ_MATCH_STEPS} steps: one state per URI character), answering 'over' rather than a match`, () => {
    const hostile = budgeted('x://' + '{a}'.repeat(32) + 'b'.repeat(300));
    const budget = { steps: READ_MATCH_STEPS };
    expect(hostile('x://' + 'a'.repeat(8000) + 'c', budget)).toBe('over');
    expect(budget.steps).toBeLessThan(0);
    expect(budgeted('tickets://{id}')('tickets://42', { steps: READ_MATCH_STEPS })).toBe(true);
  });

  it('matches every expansion of a simple and a reserved value, and no near-miss of its literal parts', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40, unit: 'grapheme' }), fc.string({ maxLength: 40 }), (v, w) => {
        const m = uriTemplateMatcher('notes://{id}/v{+rest}');
        expect(m(`notes://${enc(v)}/v${encReserved(w)}`)).toBe(true);
        expect(m(`note://${enc(v)}/v${encReserved(w)}`)).toBe(false);
      }),
    );
  });

  it('refuses a simple value carrying a raw reserved character', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.constantFrom(...":/?#[]@!$&'()*+;="), fc.string({ maxLength: 20 }), (a, c, b) => {
        expect(uriTemplateMatcher('t://{id}')(`t://${enc(a)}${c}${enc(b)}`)).toBe(false);
      }),
    );
  });
});
