import { describe, expect, it } from 'vitest';
import { parseShebang } from '../../src/attest/shebang.js';

const parse = (line: string) => parseShebang(Buffer.from(line + '\nrest of script'), '/srv/x');

describe('shebang parsing', () => {
  it('passes the rest of the line as one argument, as the kernel does', () => {
    expect(parse('#!/usr/bin/node --max-old-space-size=64 --no-warnings')).toEqual({
      interpreter: '/usr/bin/node',
      args: ['--max-old-space-size=64 --no-warnings'],
      viaEnv: false,
    });
  });

  it('turns /usr/bin/env NAME into a bare name for the trusted PATH', () => {
    expect(parse('#!/usr/bin/env node')).toEqual({ interpreter: 'node', args: [], viaEnv: true });
  });

  it('splits env -S arguments', () => {
    expect(parse('#!/usr/bin/env -S node --no-warnings --enable-source-maps')).toEqual({
      interpreter: 'node',
      args: ['--no-warnings', '--enable-source-maps'],
      viaEnv: true,
    });
  });

  it('tolerates a CRLF line ending and spaces after #!', () => {
    expect(parse('#! /usr/bin/env node\r')).toEqual({ interpreter: 'node', args: [], viaEnv: true });
  });

  it('is undefined for a file without #!', () => {
    expect(parseShebang(Buffer.from('\x7fELF'), '/srv/x')).toBeUndefined();
  });

  it.each([
    ['a relative interpreter', '#!node', /relative interpreter/],
    ['env options it does not interpret', '#!/usr/bin/env -i node', /option or assignment '-i'/],
    ['env assignments', '#!/usr/bin/env NODE_OPTIONS=--x node', /option or assignment/],
    ['env with no program', '#!/usr/bin/env', /no program name/],
    ['env -S with quoting', '#!/usr/bin/env -S node "--title=a b"', /quotes, escapes or variables/],
    ['env given two words without -S', '#!/usr/bin/env node --inspect', /as one word/],
  ])('refuses %s with a reason', (_what, line, reason) => {
    expect(() => parse(line)).toThrow(reason);
  });
});
