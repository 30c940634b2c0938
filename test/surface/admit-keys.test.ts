import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { foldName } from '../../src/protocol/fold.js';
import { admitHandshake, admitTool, DEFAULT_CAPS, InadmissibleError, ListingAdmitter } from '../../src/surface/admit.js';

// The refusals of admitTool, in the order they are met, and the fact its case-variant test rests on.

function refusal(json: string): string {
  try {
    admitTool(readJson(json), 0, DEFAULT_CAPS);
  } catch (err) {
    if (err instanceof InadmissibleError) return err.reason;
    throw err;
  }
  return 'admitted';
}

describe('case-variant keys', () => {
  it('rest on the one fold: a key of another length than a sensitive key is folded when it holds a NUL or a code point outside ASCII', () => {
    // refuseCaseVariants passes over a plain ASCII key whose length is no sensitive key's (protocol/fold.ts
    // variantOf); a key folds to ASCII text of another length only by a NUL or a listed code point
    // (test/protocol/fold.test.ts scans every code point).
    expect(foldName('\u212a')).toBe('k'); // the Kelvin sign: non-ASCII to ASCII, one unit for one
    expect(refusal('{"name":"a","description\\u0000":1}')).toBe('tool "a" carries "description\\u0000", a case-variant of "description"');
    expect(refusal('{"name":"a","x":{"description":"d","descriptionX\\u0000":1,"DESCRIPTION\\u0000\\u0000":2}}')).toBe('tool "a" carries "DESCRIPTION\\u0000\\u0000", a case-variant of "description"');
    const handshake = (extra: string): unknown => admitHandshake(readJson(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"},"instructions":"Use read.",${extra}}`), DEFAULT_CAPS);
    expect(() => handshake('"in\\ufb06ructions":"x"')).toThrow('the initialize result carries "in\ufb06ructions", a case-variant of "instructions"');
    expect(() => handshake('"ınstructions":"x"')).toThrow('a case-variant of "instructions"');
  });

  it('are refused at the top level, with a Kelvin sign too', () => {
    expect(refusal('{"name":"a","Title":"x"}')).toBe('tool "a" carries "Title", a case-variant of "title"');
    expect(refusal('{"name":"a","inputschema":{}}')).toBe('tool "a" carries "inputschema", a case-variant of "inputSchema"');
    expect(refusal('{"name":"a","title":"t","annotations":{},"\u212Aey":1}')).toBe('admitted');
  });

  it('are refused at any depth, the first one in arrival order named', () => {
    expect(refusal('{"name":"a","inputSchema":{"properties":{"x":{"DESCRIPTION":"y"}}}}')).toBe('tool "a" carries "DESCRIPTION", a case-variant of "description"');
    // The keys of an object are checked before what they hold.
    expect(refusal('{"name":"a","x":{"y":{"descriptioN":1},"Description":2}}')).toBe('tool "a" carries "Description", a case-variant of "description"');
    expect(refusal('{"name":"a","x":[{"desCription":1}],"y":{"descRiption":2}}')).toBe('tool "a" carries "desCription", a case-variant of "description"');
    expect(refusal('{"name":"a","Name":"b","x":{"Description":2}}')).toBe('tool "a" carries "Name", a case-variant of "name"');
    expect(refusal('{"name":"a","x":{"description":"ok","y":["description"]}}')).toBe('admitted');
  });

  it('are refused before a description or schema of the wrong type, and before a number out of range', () => {
    expect(refusal('{"name":"a","description":1,"x":{"Description":2}}')).toBe('tool "a" carries "Description", a case-variant of "description"');
    expect(refusal('{"name":"a","z":1e400,"x":{"Description":2}}')).toBe('tool "a" carries "Description", a case-variant of "description"');
    expect(refusal('{"name":"a","z":1e400,"description":1}')).toBe('tool "a" has a "description" that is not a string');
    expect(refusal('{"name":"a","z":1e400,"inputSchema":[]}')).toBe('tool "a" has an "inputSchema" that is not an object');
  });
});

describe('numbers out of range', () => {
  it('are named in the order the fields arrived, not the canonical order', () => {
    expect(refusal('{"name":"a","z":1e400,"b":-2e999}')).toBe('tool "a" cannot be canonicalized: number 1e400 is outside the IEEE-754 double range');
    expect(refusal('{"name":"a","b":-2e999,"z":1e400}')).toBe('tool "a" cannot be canonicalized: number -2e999 is outside the IEEE-754 double range');
    // Within a field, in canonical order.
    expect(refusal('{"name":"a","f":{"z":1e400,"b":-2e999}}')).toBe('tool "a" cannot be canonicalized: number -2e999 is outside the IEEE-754 double range');
  });
});

describe('the byte caps', () => {
  it('count the canonical UTF-8 bytes of each tool and of the listing', () => {
    const tool = '{"name":"a","description":"é€😀"}'; // canonical: 38 bytes
    expect(admitTool(readJson(tool), 0, DEFAULT_CAPS).bytes).toBe(38);
    expect(() => admitTool(readJson(tool), 0, { ...DEFAULT_CAPS, maxToolBytes: 37 })).toThrow('tool "a" is 38 bytes canonical, over the 37-byte cap');
    expect(admitTool(readJson(tool), 0, { ...DEFAULT_CAPS, maxToolBytes: 38 }).hTool).toMatch(/^sha256:/);
    const listing = (n: number) => readJson(`{"tools":[${Array.from({ length: n }, (_, i) => `{"name":"t${i}"}`).join(',')}]}`);
    expect(() => new ListingAdmitter({ ...DEFAULT_CAPS, maxSurfaceBytes: 3 * 13 }).page(listing(3))).not.toThrow();
    expect(() => new ListingAdmitter({ ...DEFAULT_CAPS, maxSurfaceBytes: 3 * 13 - 1 }).page(listing(3))).toThrow('the surface exceeds the 38-byte cap');
  });
});
