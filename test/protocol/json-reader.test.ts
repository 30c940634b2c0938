import { describe, expect, it } from 'vitest';
import { JsonNumber, JsonReadError, readJson } from '../../src/protocol/json/reader.js';

function kindOf(input: string | Uint8Array): string {
  try {
    readJson(input);
    return 'ok';
  } catch (err) {
    return (err as JsonReadError).kind;
  }
}

describe('the lossless JSON reader', () => {
  it('keeps the digits of a number beyond 2^53', () => {
    const v = readJson('{"id":9007199254740993,"x":1.0e2}') as Map<string, unknown>;
    expect((v.get('id') as JsonNumber).lexeme).toBe('9007199254740993');
    expect((v.get('x') as JsonNumber).lexeme).toBe('1.0e2');
  });

  it('keeps keys in the order they arrived', () => {
    const v = readJson('{"z":1,"a":2,"m":3}') as Map<string, unknown>;
    expect([...v.keys()]).toEqual(['z', 'a', 'm']);
  });

  it('refuses duplicate keys, naming the key and where', () => {
    expect(() => readJson('{"a":{"b":1,"b":2}}')).toThrow(/duplicate key "b" in object at \/a/);
  });

  it('refuses duplicate keys that differ only in escape form', () => {
    expect(kindOf('{"name":1,"n\\u0061me":2}')).toBe('duplicate_key');
  });

  it('refuses invalid UTF-8 bytes', () => {
    expect(kindOf(Buffer.from([0x22, 0xff, 0x22]))).toBe('invalid_utf8');
  });

  it('refuses lone surrogates in escapes', () => {
    expect(kindOf('"\\ud800"')).toBe('lone_surrogate');
    expect(kindOf('"\\udc00x"')).toBe('lone_surrogate');
    expect(kindOf('"\\ud83d\\ude00"')).toBe('ok');
  });

  it('refuses nesting deeper than the bound', () => {
    expect(kindOf('['.repeat(65) + ']'.repeat(65))).toBe('too_deep');
    expect(kindOf('['.repeat(64) + ']'.repeat(64))).toBe('ok');
  });

  it('refuses input over the size bound', () => {
    expect(() => readJson('"' + 'x'.repeat(100) + '"', { maxBytes: 50, maxDepth: 8 })).toThrow(/exceeds 50 bytes/);
  });

  it.each([
    ['trailing comma', '[1,]'],
    ['leading zero', '01'],
    ['bare word', 'nul'],
    ['unescaped control character', '"a\u0001"'],
    ['two values', '1 2'],
    ['byte order mark', '\ufeff{}'],
    ['empty input', ''],
    ['plus sign', '+1'],
  ])('refuses %s', (_what, text) => {
    expect(kindOf(text)).toBe('syntax');
  });

  it('accepts a bare carriage return as whitespace', () => {
    expect(kindOf('{"a":\r1}\r')).toBe('ok');
  });

  it('reports line and column of a syntax error', () => {
    expect(() => readJson('{\n  "a": tru\n}')).toThrow(/line 2 column 8/);
  });
});
