import { WardenError } from '../error.js';
import { changeRules, type RulesChange, type RulesEdit } from '../enroll/rules-edit.js';
import { applyProposal, proposeRules } from '../enroll/rules-propose.js';
import { rulesView } from '../enroll/rules-view.js';
import { JsonReadError, readJson, toPlain } from '../protocol/json/reader.js';
import { inexactNumber } from '../store/json-file.js';
import { openHome } from '../store/home.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadServers, serverById } from '../store/servers.js';
import { escaped } from '../escape.js';
import { confirm, line, printJson, shortSha } from './output.js';
import { command, jsonOfProposal, jsonOfView, printProposal, printRulesView } from './rules-print.js';

// `mcp-warden rules <id> [--json]`: shows the operator's rules of a server; the edit flags change them (in the
// order given), each change validated by the schema of servers.json, written, pinned in warden.lock and audited.
// `--propose` offers a classification read from the server's own annotations, applied only on the operator's yes.

export interface RulesOptions {
  json?: boolean;
  pin?: boolean;
  clear?: boolean;
  propose?: boolean;
  yes?: boolean;
}

/** The edit flags as given, in order: [flag, value]. */
export type RawEdits = readonly (readonly [string, string])[];

/** Splits `spec` at `sep` after the tool name: the longest known tool name followed by `sep` wins (a tool may
 *  be named "a:b"), else the first `sep`. */
function splitTool(flag: string, spec: string, sep: string, names: readonly string[], shape: string): [string, string] {
  const known = names.filter((n) => spec.startsWith(n + sep)).sort((a, b) => b.length - a.length)[0];
  const at = known !== undefined ? known.length : spec.indexOf(sep);
  if (at <= 0) throw new WardenError('USAGE', `--${flag} ${JSON.stringify(spec)}: expected ${shape}. Nothing was changed.`);
  return [spec.slice(0, at), spec.slice(at + sep.length)];
}

/** A --fix value: JSON, read strictly (a duplicate key is refused, big numbers keep their digits for the schema). */
function jsonValue(spec: string, text: string): unknown {
  try {
    const value = readJson(Buffer.from(text), { maxBytes: 1024 * 1024, maxDepth: 32 });
    const inexact = inexactNumber(value);
    if (inexact) throw new WardenError('USAGE', `--fix ${JSON.stringify(spec)}: the number ${inexact.lexeme.slice(0, 40)} cannot be kept as written (servers.json holds doubles): the server would get another value. Write it with at most 15 significant digits, or as a string. Nothing was changed.`);
    return toPlain(value);
  } catch (err) {
    if (!(err instanceof JsonReadError)) throw err;
    const hint = /^[A-Za-z_/.]/.test(text.trim()) ? ` A string is written in JSON quotes, e.g. --fix '${spec.slice(0, spec.length - text.length)}"${text}"'.` : '';
    throw new WardenError('USAGE', `--fix ${JSON.stringify(spec)}: the value ${JSON.stringify(text)} is not JSON (${err.message}).${hint} Nothing was changed.`);
  }
}

function seconds(text: string): unknown {
  return /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text;
}

/** The edit flags as edits; `names`: the tool names of the lock and of the rules, to split TOOL from the rest. */
export function editsOf(raw: RawEdits, names: readonly string[]): RulesEdit[] {
  return raw.map(([flag, spec]): RulesEdit => {
    switch (flag) {
      case 'mode':
        return { op: 'mode', mode: spec };
      case 'kind': {
        const [tool, kind] = splitTool(flag, spec, '=', names, 'TOOL=KIND');
        return { op: 'kind', tool, kind };
      }
      case 'unclassify':
        return { op: 'unclassify', tool: spec };
      case 'policy': {
        const [kind, decision] = splitTool(flag, spec, '=', [], 'KIND=allow|ask|deny|default');
        return { op: 'policy', kind, decision };
      }
      case 'allow-hint-mismatch':
      case 'no-allow-hint-mismatch':
        return { op: 'hint-mismatch', tool: spec, allow: flag === 'allow-hint-mismatch' };
      case 'deny':
      case 'undeny': {
        const [tool, param] = splitTool(flag, spec, ':', names, 'TOOL:PARAM');
        return { op: flag, tool, param };
      }
      case 'unfix': {
        const [tool, param] = splitTool(flag, spec, ':', names, 'TOOL:PARAM');
        return { op: 'unfix', tool, param };
      }
      case 'fix': {
        const [tool, rest] = splitTool(flag, spec, ':', names, 'TOOL:PARAM=JSON');
        const eq = rest.indexOf('=');
        if (eq <= 0) throw new WardenError('USAGE', `--fix ${JSON.stringify(spec)}: expected TOOL:PARAM=JSON. Nothing was changed.`);
        return { op: 'fix', tool, param: rest.slice(0, eq), value: jsonValue(spec, rest.slice(eq + 1)) };
      }
      case 'describe': {
        const [tool, text] = splitTool(flag, spec, '=', names, 'TOOL=TEXT');
        return { op: 'describe', tool, text };
      }
      case 'undescribe':
        return { op: 'undescribe', tool: spec };
      case 'ask-timeout':
        return { op: 'ask-timeout', seconds: seconds(spec) };
      default:
        throw new Error(`unknown rules edit flag --${flag}`);
    }
  });
}

function toolNames(paths: HomePaths, id: string): string[] {
  const server = serverById(loadServers(paths), id, paths);
  return [...(loadLocks(paths).tools.get(id)?.tools.map((t) => t.name) ?? []), ...Object.keys(server.rules?.tools ?? {})];
}

function said(id: string, change: RulesChange): string {
  if (!change.changed) return `The rules of server '${id}' are unchanged${change.to ? ' and pinned' : ''}.`;
  return `Changed the rules of server '${id}': ${change.to ? `pinned ${shortSha(change.to)}… in warden.lock` : 'it has none now; the pin was removed from warden.lock'} (was ${change.from ? `${shortSha(change.from)}…` : 'none'}).`;
}

async function propose(homeFlag: string | undefined, paths: HomePaths, id: string, opts: RulesOptions): Promise<number> {
  const proposal = proposeRules(paths, id);
  const cmd = (rest: string): string => command(homeFlag, paths.home, rest);
  if (!opts.json) printProposal(id, proposal);
  let yes = opts.yes === true;
  if (!yes && process.stdin.isTTY === true && !opts.json) yes = await confirm(escaped(`Apply it to server '${id}' as strict mode (tools without a rule get the kind shown)? [y/N] `));
  if (!yes) {
    if (opts.json) printJson({ server: id, proposal: jsonOfProposal(proposal), applied: false });
    else line(escaped(`Nothing was applied. To apply it as strict mode: ${cmd(`rules ${id} --propose --yes`)}`));
    return 0;
  }
  const change = await applyProposal(paths, id, proposal, opts.pin === true);
  if (opts.json) printJson({ server: id, proposal: jsonOfProposal(proposal), applied: true, rules: jsonOfView(rulesView(paths, id), change) });
  else {
    line(escaped(said(id, change)));
    printRulesView(rulesView(paths, id), cmd);
  }
  return 0;
}

/** `mcp-warden rules <id>`: show, or change with the edit flags. */
export async function rulesVerb(homeFlag: string | undefined, id: string, opts: RulesOptions, raw: RawEdits): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  if (opts.propose) {
    if (raw.length > 0 || opts.clear) throw new WardenError('USAGE', `--propose applies a whole classification; give the edit flags in a command of their own. Nothing was changed.`);
    return propose(homeFlag, paths, id, opts);
  }
  if (opts.yes) throw new WardenError('USAGE', '--yes confirms --propose, and only that. Nothing was changed.');
  const cmd = (rest: string): string => command(homeFlag, paths.home, rest);
  let change: RulesChange | undefined;
  if (raw.length > 0 || opts.clear || opts.pin) {
    const edits: RulesEdit[] = [...(opts.clear ? [{ op: 'clear' } as const] : []), ...editsOf(raw, toolNames(paths, id))];
    change = await changeRules(paths, id, edits, opts.pin === true);
    if (!opts.json) line(escaped(said(id, change)));
  }
  const view = rulesView(paths, id);
  if (opts.json) printJson(jsonOfView(view, change));
  else printRulesView(view, cmd);
  return 0;
}
