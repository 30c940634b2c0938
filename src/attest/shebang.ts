import { WardenError } from '../error.js';

// What the kernel does with "#!": the first line (up to 256 bytes) names an interpreter and passes the rest of
// the line as ONE argument. For "/usr/bin/env NAME" and "/usr/bin/env -S NAME args", env would search the
// inherited PATH; the warden instead resolves NAME through the trusted PATH and launches it directly, so no
// env hop can be shadowed.

export interface Shebang {
  /** The interpreter as written: an absolute path, or a bare name when it came through env. */
  interpreter: string;
  /** Arguments before the script. */
  args: string[];
  /** True when the line used /usr/bin/env (the name is looked up in the trusted PATH). */
  viaEnv: boolean;
}

const MAX_LINE = 256;

/** Parses a shebang from a file head; undefined when the file does not start with "#!". */
export function parseShebang(head: Buffer, file: string): Shebang | undefined {
  if (head.length < 2 || head[0] !== 0x23 || head[1] !== 0x21) return undefined;
  let end = head.indexOf(0x0a);
  if (end < 0) end = Math.min(head.length, MAX_LINE);
  const line = head.subarray(2, end).toString('utf8').replace(/\r$/, '').trim();
  const m = /^(\S+)(?:[ \t]+(.*))?$/.exec(line);
  if (!m || !m[1]) throw new WardenError('SHEBANG_INVALID', `${file} starts with "#!" but names no interpreter.`);
  const interpreter = m[1];
  const rest = (m[2] ?? '').trim();
  if (!interpreter.startsWith('/')) {
    throw new WardenError('SHEBANG_INVALID', `${file}'s shebang names a relative interpreter '${interpreter}'; the kernel would resolve it against the current directory.`);
  }
  if (!/(^|\/)env$/.test(interpreter)) {
    return { interpreter, args: rest ? [rest] : [], viaEnv: false };
  }
  return parseEnv(rest, file);
}

function parseEnv(rest: string, file: string): Shebang {
  let words: string[];
  if (rest.startsWith('-S')) {
    const split = rest.slice(2).trim();
    if (/["'\\$]/.test(split)) {
      throw new WardenError('SHEBANG_INVALID', `${file}'s shebang uses env -S with quotes, escapes or variables, which the warden does not interpret; write the interpreter's absolute path instead.`);
    }
    words = split.split(/[ \t]+/).filter(Boolean);
  } else {
    words = rest ? [rest] : [];
    if (rest.startsWith('-') || /^[^ \t]*=/.test(rest)) words = rest.split(/[ \t]+/);
    else if (rest.includes(' ') || rest.includes('\t')) {
      throw new WardenError('SHEBANG_INVALID', `${file}'s shebang passes "${rest}" to env as one word (the kernel does not split it); env would look for a program of that whole name. Use env -S or an absolute interpreter path.`);
    }
  }
  const name = words[0];
  if (!name) throw new WardenError('SHEBANG_INVALID', `${file}'s shebang runs env with no program name.`);
  if (name.startsWith('-') || name.includes('=')) {
    throw new WardenError('SHEBANG_INVALID', `${file}'s shebang passes env the option or assignment '${name}', which the warden does not interpret; write the interpreter's absolute path instead.`);
  }
  return { interpreter: name, args: words.slice(1), viaEnv: true };
}
