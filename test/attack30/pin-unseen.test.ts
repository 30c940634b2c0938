import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';
import { MARKER } from '../attack27/helpers.js';

// Issue 26, seventh closing review. ADR 0054: "`pin` accepts what `diff` showed, and nothing else". But `diff`
// shows a changed or added tool by its name, its classes and its changed field names only (a changed description
// as a patch, and that only when stdout is a terminal): the text of an added tool, or of a changed schema (a
// parameter's description), is never shown, and `pin` locks it. The review file records that text's digest, so
// the pin "equals the review" while the operator never read it. Here the text is worded so that the first-trust
// scan raises nothing.

let dir: string;
let home: string;
let scenarioFile: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenarioFile, '{}');
  addServer(home, 'unseen', [NODE, path.join(SERVERS, 'attack30/pin-unseen.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const count = (text: string): number => text.split(MARKER).length - 1;

describe('diff before pin', () => {
  it("shows the text of every tool a pin would accept (an added tool, a changed parameter's description)", () => {
    fs.writeFileSync(scenarioFile, JSON.stringify({ grow: true }));
    const diff = cli(home, ['diff', 'unseen']);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toContain('added    sync');
    const pin = cli(home, ['pin', 'unseen']);
    expect(pin.code, pin.stderr).toBe(0);
    // What was locked carries the text twice (echo's parameter, sync's description): diff must have shown both.
    expect(count(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8'))).toBe(2);
    expect(count(diff.stdout)).toBe(2);
  });
});
