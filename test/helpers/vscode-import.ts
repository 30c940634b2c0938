import fs from 'node:fs';
import path from 'node:path';
import { copyOfRunTemplate } from './run-template.js';
import { NODE, SERVERS, addServer, cli } from './warden.js';

// `import` of a VS Code .vscode/mcp.json into a home with basic.mjs enrolled as 'basic', for the tests of what
// VS Code would run from such a file (test/attack42/clientcfg-dev-debug, test/attack43/vscode-input-command).

export const BASIC = path.join(SERVERS, 'basic.mjs');

/** A home with basic.mjs enrolled as 'basic' (made once per run; an entry of the same command line reuses it,
 *  so import launches nothing). */
function enrolledHome(): { dir: string; home: string } {
  const { dir } = copyOfRunTemplate(`attack42-vscode-dev ${NODE}`, (d) => {
    addServer(path.join(d, 'home'), 'basic', [NODE, BASIC]);
  });
  return { dir, home: path.join(dir, 'home') };
}

interface Report {
  entries: { name: string; result: string; detail?: string }[];
}

/** Writes the mcp.json that `file(home)` makes into a project of a copy of the enrolled home, runs
 *  `import FILE --yes --json`: the exit code, each entry's outcome and detail, and the file's text before and after. */
export function importVscode(file: (home: string) => Record<string, unknown>): { code: number | null; outcome: Record<string, string>; detail: Record<string, string>; before: string; after: string } {
  const { dir, home } = enrolledHome();
  try {
    const at = path.join(dir, 'project', '.vscode', 'mcp.json');
    const before = JSON.stringify(file(home), null, 2);
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.writeFileSync(at, before);
    const r = cli(home, ['import', at, '--yes', '--json']);
    const report = JSON.parse(r.stdout) as Report;
    return {
      code: r.code,
      outcome: Object.fromEntries(report.entries.map((e) => [e.name, e.result])),
      detail: Object.fromEntries(report.entries.map((e) => [e.name, e.detail ?? ''])),
      before,
      after: fs.readFileSync(at, 'utf8'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
