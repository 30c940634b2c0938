import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, SERVERS, WARDEN, addServer, cli } from '../helpers/warden.js';

// Review 21: an entry that already launches the warden is counted "already" when its `--home DIR` is this home
// after path.resolve, a lexical reading that takes each client variable for one path component. VS Code (and
// Cursor) resolve ${workspaceFolder}, ${userHome}, ${env:X} in "args" before they start the command, and a
// variable of several components then lets the `..` after it land elsewhere: for the client,
// "/${workspaceFolder}/${userHome}/../../<home>" is <workspaceFolder>/<home>, a directory of the project, whose
// servers.json, allowlist and lock are the project's. import reports the entry "already launched through the
// warden" for the user's home, exit 0, and never reads "${" in it (wardenEntry's runWords: only isAbsolute).

const BASIC = path.join(SERVERS, 'basic.mjs');

function enrolledHome(): { dir: string; home: string } {
  const { dir } = copyOfRunTemplate(`attack42-vscode-dev ${NODE}`, (d) => {
    addServer(path.join(d, 'home'), 'basic', [NODE, BASIC]);
  });
  return { dir, home: path.join(dir, 'home') };
}

describe('an entry already launching the warden whose --home holds client variables', () => {
  it('is refused CLIENT_ENTRY_AMBIGUOUS, not counted "already" for this home (VS Code resolves it to a directory of the project)', () => {
    const { dir, home } = enrolledHome();
    try {
      const project = path.join(dir, 'project');
      const file = path.join(project, '.vscode', 'mcp.json');
      const disguised = `/\${workspaceFolder}/\${userHome}/../..${home}`;
      // What the warden compares (lexically) is this home; what VS Code starts it with is not.
      expect(path.resolve(disguised)).toBe(home);
      const asVscode = path.resolve(disguised.replace('${workspaceFolder}', project).replace('${userHome}', '/home/alice'));
      expect(asVscode.startsWith(project + path.sep)).toBe(true);
      const text = JSON.stringify({ servers: { basic: { type: 'stdio', command: NODE, args: [WARDEN, '--home', disguised, 'run', 'basic'] } } }, null, 2);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      const r = cli(home, ['import', file, '--yes', '--json']);
      const report = JSON.parse(r.stdout) as { entries: { name: string; result: string; detail?: string }[] };
      const entry = report.entries.find((e) => e.name === 'basic');
      expect(entry?.result).toBe('refused');
      expect(entry?.detail ?? '').toMatch(/^CLIENT_ENTRY_AMBIGUOUS: /);
      expect(r.code).toBe(3);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
