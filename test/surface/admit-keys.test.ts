import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { admitTool, DEFAULT_CAPS, InadmissibleError, ListingAdmitter } from '../../src/surface/admit.js';

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
  it('rest on this: a key lower-cases to ASCII text only from text of the same UTF-16 length', () => {
    // refuseCaseVariants passes over a key whose length is not that of a sensitive key without lower-casing it.
    const odd: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const s = String.fromCodePoint(cp);
      const lower = s.toLowerCase();
      // eslint-disable-next-line no-control-regex
      if (/^[\u0000-\u007f]*$/.test(lower) && lower.length !== s.length) odd.push(cp.toString(16));
    }
    expect(odd).toEqual([]);
    expect('\u212a'.toLowerCase()).toBe('k'); // the Kelvin sign: non-ASCII to ASCII, one unit for one
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
