import { describe, expect, it } from 'vitest';
import { BASIC, importVscode } from '../helpers/vscode-import.js';
import { NODE, WARDEN } from '../helpers/warden.js';

// Review 19: a VS Code mcp.json entry's "dev" member changes how VS Code starts the entry's command. With
// `"dev": {"debug": {"type": "node"}}` VS Code (src/vs/workbench/contrib/mcp/common/mcpDevMode.ts) starts a
// command that ends in "node" as `node --inspect-brk=127.0.0.1:PORT <args>`, and `dev.watch` restarts it on file
// changes. `import` rewrites only command, args and cwd, so the entry it wraps keeps "dev", and VS Code starts
// the warden itself under an inspector that waits on a loopback TCP port: the warden refuses (WARDEN_PRELOADED)
// only after node has let whoever connects first run code in it, and such code can hide the option from that
// check (measured: a local process connected first, ran its code, filtered --inspect out of process.execArgv,
// and the warden went on to launch the server). An entry that already launches the warden with that member is
// counted "already launched through the warden" and left as it is, exit 0.

/** The arguments VS Code starts a stdio entry with (mcpDevMode.ts `transform`, debug type "node"). */
function vscodeArgs(entry: { command: string; args: string[]; dev?: { debug?: { type?: string } } }): string[] {
  return entry.dev?.debug?.type === 'node' && /node[0-9]*$/.test(entry.command) ? ['--inspect-brk=127.0.0.1:9230', ...entry.args] : entry.args;
}

type Entry = { command: string; args: string[]; dev?: { debug?: { type?: string } } };
const DEV = { watch: '**/*.mjs', debug: { type: 'node' } };

/** Imports a .vscode/mcp.json holding `servers` into a copy of the enrolled home; the outcome of each entry and
 *  the file's entries afterwards. */
function importServers(servers: (home: string) => Record<string, object>): { code: number | null; outcome: Record<string, string>; detail: Record<string, string>; after: Record<string, Entry> } {
  const r = importVscode((home) => ({ servers: servers(home) }));
  return { ...r, after: (JSON.parse(r.after) as { servers: Record<string, Entry> }).servers };
}

describe('a VS Code entry whose "dev" member starts its command under the debugger', () => {
  it('launching the warden already, is refused as a disguise, not counted "already launched through the warden"', () => {
    const r = importServers((home) => ({ wrapped: { type: 'stdio', command: NODE, args: [WARDEN, '--home', home, 'run', 'basic'], dev: DEV } }));
    expect(r.outcome.wrapped).toBe('refused');
    expect(r.detail.wrapped).toMatch(/^CLIENT_ENTRY_AMBIGUOUS: /);
    expect(r.code).toBe(3);
  }, 60_000);

  it('to be wrapped, is refused or rewritten without "dev.debug": VS Code never starts the warden with --inspect-brk', () => {
    const r = importServers(() => ({ basic: { type: 'stdio', command: NODE, args: [BASIC], dev: DEV } }));
    const basic = r.after.basic as Entry;
    // Not vacuous: the entry was either refused (left as it was) or wrapped to launch the warden on server 'basic'.
    expect(r.outcome.basic === 'refused' ? basic.args : basic.args.slice(-2)).toEqual(r.outcome.basic === 'refused' ? [BASIC] : ['run', 'basic']);
    // What was wrapped is started by VS Code as written, with no inspector on the warden.
    expect(r.outcome.basic === 'refused' || !vscodeArgs(basic).some((a) => a.startsWith('--inspect'))).toBe(true);
  }, 60_000);
});
