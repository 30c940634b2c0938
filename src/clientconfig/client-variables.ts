import { printable } from '../escape.js';

// Client variables that make the client run a command. VS Code resolves every value of an entry (its keys too)
// with its configuration resolver before it starts the command or connects (mcpRegistry.ts: resolveAnyAsync, then
// resolveWithInteraction over the file's top-level "inputs"): `${command:ID}` executes the VS Code command ID, and
// `${input:ID}` whose input has "type": "command" executes that input's "command" with its "args"
// (workbench.action.terminal.sendSequence types text into a shell). Cursor, a fork of VS Code, documents
// `${env:...}`, `${userHome}`, `${workspaceFolder}` only, but runs VS Code's code; the other clients expand
// environment variables only (Claude Code `${VAR}`, `${VAR:-default}`, Roo Code `${env:VAR}`, Gemini CLI `$VAR`),
// so there `${input:ID}` is a literal. An entry holding `${command:` anywhere (any format: no client writes it
// for its text), or in a VS Code or Cursor file `${input:ID}` with an ID the file's "inputs" does not define only
// as a prompt ("promptString" or "pickString"; Cursor's files have no "inputs"), is refused, whatever the entry is
// (to be wrapped, already wrapped, remote): left in the entry, the client would run the command at every start,
// outside the warden.
// Matched ignoring case and spaces after "${" (a reader that folds them runs the command too; a refusal more).

const VARIABLE = /\$\{\s*(command|input)\s*:([^}]*)\}?/gi;
const PROMPT_TYPES = new Set(['promptString', 'pickString']);
/** Deeper than this is refused unread (read.ts already bounds a file's nesting at 256). */
const MAX_DEPTH = 64;

/** The IDs of the top-level `inputs` of a VS Code file that only prompt the user, with what each other one
 *  runs (its "command", printable); an ID given twice counts as its non-prompt definition. */
export interface FileInputs {
  prompts: ReadonlySet<string>;
  commands: ReadonlyMap<string, string>;
}

export const NO_INPUTS: FileInputs = { prompts: new Set(), commands: new Map() };

const ANY_VARIABLE = new RegExp(VARIABLE.source, 'i');

/** Whether any string of `v` (keys too) holds a variable that may run a command, within MAX_DEPTH. */
function holdsVariable(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return ANY_VARIABLE.test(v);
  if (depth > MAX_DEPTH) return true;
  if (Array.isArray(v)) return v.some((x) => holdsVariable(x, depth + 1));
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => ANY_VARIABLE.test(k) || holdsVariable(x, depth + 1));
  return false;
}

export function fileInputs(inputs: unknown): FileInputs {
  const prompts = new Set<string>();
  const commands = new Map<string, string>();
  if (!Array.isArray(inputs)) return NO_INPUTS;
  for (const input of inputs) {
    if (!input || typeof input !== 'object' || Array.isArray(input)) continue;
    const o = input as Record<string, unknown>;
    if (typeof o.id !== 'string') continue;
    // A prompt whose own strings hold a variable is not counted one (what VS Code makes of it is not read here).
    if (typeof o.type === 'string' && PROMPT_TYPES.has(o.type) && !holdsVariable(o)) {
      if (!commands.has(o.id)) prompts.add(o.id);
    } else {
      prompts.delete(o.id);
      commands.set(o.id, typeof o.command === 'string' ? `the command "${printable(o.command)}"` : `an input of type ${printable(JSON.stringify(o.type ?? null))}`);
    }
  }
  return { prompts, commands };
}

/** The first string of `v` (a key or a value, depth-first) holding a variable that runs a command, with its path
 *  and what the client would run. */
function firstCommand(v: unknown, at: string, inputs: FileInputs | undefined, depth: number): { at: string; runs: string } | undefined {
  if (depth > MAX_DEPTH) return { at, runs: `something nested deeper than ${MAX_DEPTH} levels, which import does not read` };
  const inString = (s: string, where: string): { at: string; runs: string } | undefined => {
    for (const m of s.matchAll(VARIABLE)) {
      const kind = (m[1] as string).toLowerCase();
      const id = (m[2] as string).trim();
      if (kind === 'command') return { at: where, runs: `the VS Code command "${printable(id)}"` };
      if (inputs && !inputs.prompts.has(id)) return { at: where, runs: inputs.commands.get(id) ?? `whatever the input "${printable(id)}" is (the file's "inputs" does not define it as a prompt)` };
    }
    return undefined;
  };
  if (typeof v === 'string') return inString(v, at);
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) {
      const hit = firstCommand(x, `${at} > [${i}]`, inputs, depth + 1);
      if (hit) return hit;
    }
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const where = `${at} > "${printable(k)}"`;
      const hit = inString(k, where) ?? firstCommand(x, where, inputs, depth + 1);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The sentence refusing an entry that holds a variable making the client run a command, or undefined.
 *  `inputs`: the file's, when its client resolves `${input:...}` (undefined: it does not). */
export function commandVariable(o: Record<string, unknown>, inputs: FileInputs | undefined, file: string, entry: string): string | undefined {
  const hit = firstCommand(o, `"${printable(entry)}"`, inputs, 0);
  if (!hit) return undefined;
  return `the entry "${printable(entry)}" of ${file} holds at ${hit.at} a client variable (\${command:...} or \${input:...}) that VS Code resolves by running ${hit.runs} at every start or connection, before and outside the warden, so the entry is refused and left as it is. Write the value itself, or use an input of "type": "promptString" or "pickString" defined in the file's "inputs", then import again`;
}
