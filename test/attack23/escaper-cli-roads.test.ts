import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, perTestDirs } from '../helpers/warden.js';

// Review of issue 26 (class 2, the one escaper), the roads next to the import/add/diff findings: a client file's
// entry imported for real and then unwrapped (the outcome lines and unwrap's --dry-run patch), and a script
// reached through a symlink whose name the file's author chose (add's "runs" line and the artifact's "via" chain).

const tmp = perTestDirs();
const BASIC = path.join(SERVERS, 'basic.mjs');
const ESC = '\u001b';
// Any code point of the one escaper's list, raw (the line feed ends lines).
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u;
const rawLines = (out: string): string[] => out.split('\n').filter((l) => RAW.test(l));

describe('import, unwrap and add print what a file chose through the one escaper', () => {
  it('import, then unwrap --dry-run: the outcome lines and the patch hold no raw control, bidi or tag character', () => {
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const hostile = `--quiet${ESC}[8m\u202e\u{e0041}`;
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { helper: { command: NODE, args: [BASIC, hostile] } } }, null, 2));
    const imported = cli(tmp.home, ['import', file]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('imported');
    expect(rawLines(imported.stdout)).toEqual([]);
    const unwrapped = cli(tmp.home, ['unwrap', '--dry-run', file]);
    expect(unwrapped.code).toBe(0);
    expect(unwrapped.stdout).toContain('would be restored');
    expect(unwrapped.stdout).toContain('\\u001b[8m'); // the restored argument is shown, escaped, in the patch
    expect(rawLines(unwrapped.stdout)).toEqual([]);
  });

  it("add: a script reached through a symlink named with erase-line and conceal shows no raw control character in the runs line or the artifact's chain", () => {
    const link = path.join(tmp.dir, `srv${ESC}[2K\r${ESC}[8m\u202e.mjs`);
    fs.mkdirSync(tmp.dir, { recursive: true });
    fs.symlinkSync(BASIC, link);
    const r = cli(tmp.home, ['add', 'linked', '--yes', '--', NODE, link]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('via ');
    expect(r.stdout).toContain('\\u001b[2K\\u000d\\u001b[8m\\u202e.mjs');
    expect(rawLines(r.stdout)).toEqual([]);
  });
});
