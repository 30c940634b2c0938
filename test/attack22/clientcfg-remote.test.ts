import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, perTestDirs } from '../helpers/warden.js';

// Issue 26, item 15: an entry with a `command` (or `type: "stdio"`) is a local process whatever else it carries.
// A `url` (or a remote `type`) beside it makes it ambiguous: a client that goes by `type` or `command` launches
// it, one that goes by `url` connects. It was reported "remote: not a local process" and left to run outside the
// warden, exit 0. Now it is refused, named, with a stable code, in every client format.

const tmp = perTestDirs();
const BASIC = path.join(SERVERS, 'basic.mjs');

interface Report {
  entries: { name: string; result: string; detail?: string }[];
}

/** Writes the client file and imports it; `unchanged()` says whether the file still holds what was written. */
function importFile(file: string, body: object): { code: number | null; outcome: Record<string, string>; report: Report; unchanged: () => boolean } {
  const text = JSON.stringify(body, null, 2);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  const r = cli(tmp.home, ['import', file, '--yes', '--json']);
  const report = JSON.parse(r.stdout) as Report;
  return { code: r.code, outcome: Object.fromEntries(report.entries.map((e) => [e.name, e.result])), report, unchanged: () => fs.readFileSync(file, 'utf8') === text };
}

describe('an entry that is both a local process and a remote server is refused, not left as remote', () => {
  it('in Claude Code .mcp.json and VS Code mcp.json: command or type stdio beside url or a remote type is CLIENT_ENTRY_AMBIGUOUS; plain remote entries stay remote', () => {
    const marker = path.join(tmp.dir, 'ran');
    const sh = { command: '/bin/sh', args: ['-c', `echo ran > ${marker}`] };
    const node = { command: NODE, args: [BASIC] };
    const url = 'https://example.com/mcp';
    const claude = path.join(tmp.dir, 'project', '.mcp.json');
    const a = importFile(claude, {
      mcpServers: {
        'stdio-with-url': { type: 'stdio', url, ...sh },
        'command-with-url': { url, ...node },
        'http-with-command': { type: 'http', url, ...node },
        'sse-with-command-no-url': { type: 'sse', ...node },
        'stdio-with-url-no-command': { type: 'stdio', url },
        'command-with-server-url': { serverUrl: url, ...node },
        'command-with-http-url': { httpUrl: url, ...node },
        'command-with-null-url': { url: null, ...node },
        remote: { type: 'http', url },
        'remote-url-only': { url },
      },
    });
    expect(a.code).toBe(3);
    expect(a.outcome).toEqual({
      'stdio-with-url': 'refused',
      'command-with-url': 'refused',
      'http-with-command': 'refused',
      'sse-with-command-no-url': 'refused',
      'stdio-with-url-no-command': 'refused',
      'command-with-server-url': 'refused',
      'command-with-http-url': 'refused',
      'command-with-null-url': 'refused',
      remote: 'remote',
      'remote-url-only': 'remote',
    });
    for (const e of a.report.entries.filter((x) => x.result === 'refused')) expect(e.detail, e.name).toMatch(/^CLIENT_ENTRY_AMBIGUOUS: .*both a local process .* and a remote server/);

    const vscode = path.join(tmp.dir, 'project', '.vscode', 'mcp.json');
    const b = importFile(vscode, { servers: { 'sse-with-command': { type: 'sse', url, ...sh }, 'stdio-with-url': { type: 'stdio', url, ...node }, remote: { type: 'http', url } } });
    expect(b.code).toBe(3);
    expect(b.outcome).toEqual({ 'sse-with-command': 'refused', 'stdio-with-url': 'refused', remote: 'remote' });

    expect(a.unchanged() && b.unchanged()).toBe(true); // nothing rewritten
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(path.join(tmp.home, 'servers.json')) ? Object.keys((JSON.parse(fs.readFileSync(path.join(tmp.home, 'servers.json'), 'utf8')) as { servers: object }).servers) : []).toEqual([]);
  }, 60_000);
});
