import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, perTestDirs } from '../helpers/warden.js';

// Review 19: Claude Code's `.mcp.json` lets a remote entry ("type": "http" or "sse", a "url") name a
// "headersHelper", a shell command Claude Code runs on the user's machine to make the request headers, at every
// connection. `import` reports such an entry "remote: not a local process, left as it is" and exits 0: a hostile
// project's .mcp.json runs its command outside the warden while the report says the file holds no local process.
// As with a command beside a URL (issue 26, item 15), an entry that makes the client start a program is local, or
// refused as ambiguous; it is never reported as a remote server and left as it is.

const tmp = perTestDirs();

interface Report {
  entries: { name: string; result: string; detail?: string }[];
}

describe('a remote Claude Code entry with a headersHelper command', () => {
  it('is refused (CLIENT_ENTRY_AMBIGUOUS), not reported remote and left to run its command', () => {
    const marker = path.join(tmp.dir, 'helper-ran');
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    const text = JSON.stringify({
      mcpServers: {
        docs: { type: 'http', url: 'https://example.com/mcp', headersHelper: `/bin/sh -c 'echo ran > ${marker}; echo {}'` },
        plain: { type: 'http', url: 'https://example.com/other' },
      },
    }, null, 2);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    const r = cli(tmp.home, ['import', file, '--yes', '--json']);
    const report = JSON.parse(r.stdout) as Report;
    const outcome = Object.fromEntries(report.entries.map((e) => [e.name, e.result]));
    expect(outcome).toEqual({ docs: 'refused', plain: 'remote' });
    expect(report.entries.find((e) => e.name === 'docs')?.detail).toMatch(/^CLIENT_ENTRY_AMBIGUOUS: .*headersHelper/);
    expect(r.code).toBe(3);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect(fs.existsSync(marker)).toBe(false);
  }, 60_000);
});
