import { printable } from '../escape.js';
import type { ClientEntry } from './read.js';

// A member named "__proto__" in a client file. JSON.parse, which the clients use, keeps it as an ordinary own
// member; a client that then copies an object by assignment (Object.assign, `o[k] = v` in a loop, a deep merge
// with its defaults) sets the prototype of the object it builds instead, and reads the prototype's members as
// if they were written there: node's spawn passes the prototype's members of an env too (child_process:
// "Prototype values are intentionally included"). {"env": {"__proto__": {"NODE_OPTIONS": "--require x.js"}}}
// in an entry that otherwise is the warden's own launch would give the warden a variable import never saw.
// No client documents such a member, so one anywhere refuses: inside an entry (at any depth, or as the entry's
// name) the entry, CLIENT_ENTRY_AMBIGUOUS (classify.ts); elsewhere in the file the file (read.ts).

export const PROTO = '__proto__';
/** Deeper than this counts as holding one (read.ts bounds a file's nesting at 256). */
const MAX_DEPTH = 64;

const pointerPart = (s: string | number): string => '/' + String(s).replaceAll('~', '~0').replaceAll('/', '~1');

/** The JSON pointer (RFC 6901) of the first member named "__proto__" in `v`, depth-first, or '' for `v` itself
 *  when nested deeper than MAX_DEPTH; undefined when there is none. */
export function protoPointer(v: unknown, at = '', depth = 0): string | undefined {
  if (!v || typeof v !== 'object') return undefined;
  if (depth > MAX_DEPTH) return at;
  const members: [string | number, unknown][] = Array.isArray(v) ? [...v.entries()] : Object.entries(v);
  for (const [k, x] of members) {
    if (k === PROTO) return at + pointerPart(k);
    const hit = protoPointer(x, at + pointerPart(k), depth + 1);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Why `entry` is refused for a member named "__proto__" (its name, or one at any depth of its value). */
export function protoMember(entry: ClientEntry): string | undefined {
  const name = `the entry "${printable(entry.name)}" of ${entry.file}`;
  const then = 'The entry is refused and left as it is';
  if (entry.name === PROTO) return `${name}: the server is named "__proto__", which a client that copies its server map by assignment takes for the map's prototype, not for a server: the members under it would be read as servers of their own, never looked at here. ${then}: rename the server, then import again`;
  const at = protoPointer(entry.value);
  if (at === undefined) return undefined;
  return `${name} holds a member named "__proto__" at JSON pointer ${printable(at, 400) || '(nested too deep to read)'}: JSON.parse keeps it as a member, but a client that copies it by assignment (Object.assign, a merge with its defaults) makes it the prototype of what it builds, whose members it then uses as written there (node passes a prototype's variables to the program it starts: NODE_OPTIONS, MCP_WARDEN_HOME), never seen by import. ${then}: remove "__proto__" from the entry, then import again`;
}
