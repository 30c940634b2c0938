import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, cli, perTestDirs } from '../helpers/warden.js';

// Review of issue 26 (class 2, the one escaper): `diff` and `verify` escape a drifted tool's name and
// description, but print the names of the fields that changed (`fields: …`) raw. They are the tool's own member
// names, chosen by the server: a member named `x<ESC>[2K<CR><ESC>]0;…<BEL>` erases the "changed read" line and
// retitles the terminal; bidi and tag characters pass as they are.

const tmp = perTestDirs();
const SHAPESHIFTER = path.join(SERVERS, 'shapeshifter.mjs');
const tool = (extra: Record<string, unknown> = {}): string => JSON.stringify([{ name: 'read', description: 'Read.', inputSchema: { type: 'object' }, ...extra }]);
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u;

describe('diff and verify print the changed fields through the one escaper', () => {
  it.each([['diff'], ['verify']])('%s: a field name chosen by the server holds no raw control, bidi or tag character', (verb) => {
    const scenario = path.join(tmp.dir, 'scenario.json');
    fs.mkdirSync(tmp.dir, { recursive: true });
    fs.writeFileSync(scenario, JSON.stringify({ toolsRaw: tool() }));
    addServer(tmp.home, 'ss', [NODE, SHAPESHIFTER], ['--env', `SCENARIO_FILE=${scenario}`]);
    fs.writeFileSync(scenario, JSON.stringify({ toolsRaw: tool({ ['x\u001b[2K\r\u001b]0;owned\u0007\u202e\u{e0041}']: 1 }) }));
    const r = cli(tmp.home, [verb, 'ss']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('DRIFT');
    const changed = r.stdout.split('\n').find((l) => l.includes('fields:')) ?? '';
    expect(changed).toMatch(/changed\s+read/);
    expect(changed).not.toMatch(RAW);
  });
});
