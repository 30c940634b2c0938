import type { Splice } from './rewrite.js';
import { applySplices } from './rewrite.js';
import type { ClientEntry } from './read.js';
import { parseToml, tableSpan } from './toml-read.js';
import { scanToml, type TomlStatement } from './toml-scan.js';

// Pointing a Codex entry at the warden in config.toml by editing only the characters of its values: `command`'s
// and `args`' values replaced (args written on one line, or added under command), the `cwd` line and the lines of
// the `env` variables the warden reads itself removed, all inside the entry's own table. Every other byte stays.
// The edit is then proved: the new text, parsed again, must mean exactly the old one with those changes and no
// other; if it does not (a layout toml-scan.ts misreads, a value TOML cannot hold), nothing is edited and the
// entry is refused with what to do (docs/adr/0070-codex-config-toml.md).

/** A TOML basic string holding `s` (JSON's escapes are TOML's). A string TOML cannot hold so (DEL raw, a lone
 *  surrogate's escape) makes the edit fail its proof, and the entry is refused. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** A canonical text of a parsed TOML value (dates by their TOML text, keys sorted), to compare two. */
function canonical(v: unknown): string {
  if (v instanceof Date) return `date:${v.toISOString()}`;
  if (typeof v === 'number') return `n:${String(Object.is(v, -0) ? '-0' : v)}`;
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

export type TomlWrap = { text: string; value: unknown } | { reason: string };

/** `text` with `entry` launching `command args`, or why it cannot be written so, proved. */
export function wrapTomlEntry(text: string, entry: ClientEntry, command: string, args: string[], dropEnv: string[]): TomlWrap {
  const name = entry.location[1] as string;
  const asTable = `write it as a table of its own, [mcp_servers.${/^[A-Za-z0-9_-]+$/.test(name) ? name : tomlString(name)}], with "command" (and "args", "cwd") as lines of it`;
  const stmts = scanToml(text);
  const span = stmts ? tableSpan(stmts, name) : undefined;
  if (!stmts || !span) return { reason: `it is not written as a table of its own in ${entry.file} (a dotted key or an inline table), which import does not edit; ${asTable}, then import again` };
  const inTable = stmts.filter((s, i) => i > span.header && s.kind === 'pair' && s.end <= span.end);
  const find = (...rest: string[]): TomlStatement | undefined => inTable.find((s) => s.path.length === rest.length + 2 && rest.every((r, i) => s.path[i + 2] === r));
  const cmd = find('command');
  if (!cmd) return { reason: `its "command" is not a line of its table [mcp_servers.${name}]; ${asTable}, then import again` };
  const splices: Splice[] = [{ offset: cmd.valueStart, length: cmd.valueEnd - cmd.valueStart, text: tomlString(command) }];
  const argsText = `[${args.map(tomlString).join(', ')}]`;
  const argsAt = find('args');
  if (argsAt) splices.push({ offset: argsAt.valueStart, length: argsAt.valueEnd - argsAt.valueStart, text: argsText });
  const cwd = find('cwd');
  if (cwd) splices.push({ offset: cwd.start, length: cwd.end - cwd.start, text: '' });
  for (const v of dropEnv) {
    const at = find('env', v);
    if (!at) return { reason: `its env sets ${v}, which the warden reads itself and import moves into servers.json, but not as a line "env.${v} = ..." of its table, which is all import removes from a TOML file; move ${v} there (or remove it), then import again` };
    splices.push({ offset: at.start, length: at.end - at.start, text: '' });
  }
  if (!argsAt) {
    // Added under the command line; pushed last, so that a line removed from the same offset goes first.
    const line = `${/^[ \t]*/.exec(text.slice(cmd.start))?.[0] ?? ''}args = ${argsText}`;
    splices.push({ offset: cmd.end, length: 0, text: text[cmd.end - 1] === '\n' ? `${line}\n` : `\n${line}` });
  }
  const out = applySplices(text, splices);
  const byHand = `To do it by hand: enroll the server with 'mcp-warden add ${args.at(-1) ?? name} -- <its command line>', then write in its table command = ${tomlString(command)} and args = ${argsText}${cwd ? ' and remove its "cwd"' : ''}${dropEnv.length ? ` and its env's ${dropEnv.join(', ')}` : ''}`;
  // The proof: the new text means the old one with exactly these changes.
  const before = parseToml(entry.file, text);
  let after: Record<string, unknown>;
  try {
    after = parseToml(entry.file, out);
  } catch {
    return { reason: `import could not write its new command line into ${entry.file} as valid TOML; ${byHand}` };
  }
  const servers = before.mcp_servers as Record<string, Record<string, unknown>>;
  const { cwd: _, ...kept } = servers[name] as Record<string, unknown>;
  const env = kept.env as Record<string, unknown> | undefined;
  const expected = { ...before, mcp_servers: { ...servers, [name]: { ...kept, command, args, ...(env ? { env: Object.fromEntries(Object.entries(env).filter(([k]) => !dropEnv.includes(k))) } : {}) } } };
  if (canonical(after) !== canonical(expected)) {
    return { reason: `import could not prove that its edit of ${entry.file} changes only this entry's command line (an unusual layout of the file); nothing was edited. ${byHand} (or ${asTable}, then import again)` };
  }
  return { text: out, value: (after.mcp_servers as Record<string, unknown>)[name] };
}
