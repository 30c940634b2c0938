import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { DEFAULT_CAPS, InadmissibleError } from '../../src/surface/admit.js';
import { CATALOGS, CatalogAdmitter } from '../../src/surface/catalog.js';

// The items of a catalog as served, kept for `diff` to show what a pin would accept (issue 26, review 3): kept
// only when asked (the out-of-band fetch), whole and as they arrived, the whole listing bounded.

const PROMPTS = CATALOGS[0] as (typeof CATALOGS)[0];
const PAGE = '{"prompts":[{"name":"greet","description":"Greets.","x":1.50,"big":12345678901234567890123},{"description":"second member first","name":"b"}]}';

describe('catalog items as served', () => {
  it('an admitter not asked to keep them (a session) keeps digests only', () => {
    const a = new CatalogAdmitter(PROMPTS, DEFAULT_CAPS);
    a.page(readJson(PAGE));
    expect(Object.keys(a.items)).toEqual(['greet', 'b']);
    expect(a.served).toBeUndefined();
  });

  it('an admitter asked to keep them keeps each item whole, its member order and number lexemes as served', () => {
    const a = new CatalogAdmitter(PROMPTS, DEFAULT_CAPS, true);
    a.page(readJson(PAGE));
    expect({ ...a.served }).toEqual({
      greet: '{"name":"greet","description":"Greets.","x":1.50,"big":12345678901234567890123}',
      b: '{"description":"second member first","name":"b"}',
    });
  });

  it('a listing whose items exceed the surface cap is refused when they are kept, and admitted when not', () => {
    const caps = { ...DEFAULT_CAPS, maxSurfaceBytes: 100 };
    const page = (n: number): string => `{"prompts":[{"name":"p${n}","description":"${'d'.repeat(60)}"}]${n < 1 ? ',"nextCursor":"c"' : ''}}`;
    const kept = new CatalogAdmitter(PROMPTS, caps, true);
    expect(kept.page(readJson(page(0)))).toBe('c');
    expect(() => kept.page(readJson(page(1)))).toThrow(new InadmissibleError('prompts/list lists more than 100 bytes of items, more than can be kept for review'));
    const session = new CatalogAdmitter(PROMPTS, caps);
    session.page(readJson(page(0)));
    expect(session.page(readJson(page(1)))).toBeUndefined();
  });
});
