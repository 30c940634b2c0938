import path from 'node:path';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/warden.js';
import { scenarioHome } from '../helpers/scenario-home.js';
import { MARKER } from '../attack27/helpers.js';

// Issue 26, seventh closing review. ADR 0054: "`pin` accepts what `diff` showed, and nothing else". But `diff`
// shows a changed or added tool by its name, its classes and its changed field names only (a changed description
// as a patch, and that only when stdout is a terminal): the text of an added tool, or of a changed schema (a
// parameter's description), is never shown, and `pin` locks it. The review file records that text's digest, so
// the pin "equals the review" while the operator never read it. Here the text is worded so that the first-trust
// scan raises nothing.

const sc = scenarioHome([{ id: 'unseen', server: 'attack30/pin-unseen.mjs' }]);

const count = (text: string): number => text.split(MARKER).length - 1;

describe('diff before pin', () => {
  it("shows the text of every tool a pin would accept (an added tool, a changed parameter's description)", () => {
    fs.writeFileSync(sc.scenario, JSON.stringify({ grow: true }));
    const diff = cli(sc.home, ['diff', 'unseen']);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toContain('added    sync');
    const pin = cli(sc.home, ['pin', 'unseen']);
    expect(pin.code, pin.stderr).toBe(0);
    // What was locked carries the text twice (echo's parameter, sync's description): diff must have shown both.
    expect(count(fs.readFileSync(path.join(sc.home, 'tools.lock'), 'utf8'))).toBe(2);
    expect(count(diff.stdout)).toBe(2);
  });
});
