import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { markerText, outsideEsm, templateCall } from '../attack13/loader-session.js';
import { HOSTILE } from './session.js';

// ATTACK (module guard, a refusal survived): the guard's refuse() writes its report to the server's stderr
// (fs.writeSync(2, …)) before it ends the process, and nothing catches that write. A server that closed its fd 2
// makes the write throw EBADF out of the guard: the refused import rejects, the server catches it, answers, and
// goes on serving (the warden audits module_refused from the report fd, but neither ends the server nor exits 3).
// On node 20 (the refusal is on the loader-hooks thread), 22 and 24 (in-thread hook).
// Asserts the secure behaviour: a refusal ends the server whatever its fds.

const tmp = perTestDirs();

describe.each(GUARD_NODES)('a refusal with the server\'s stderr closed, on %s', (_label, node) => {
  it('ends a server that closed its stderr and catches the refusal of an outside import', async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideEsm(path.join(tmp.dir, 'elsewhere/late.mjs'), marker);
    const r = await templateCall(tmp.home, node, HOSTILE, 'closedstderr', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('survived the refusal');
    expect(r.serverExit).toBe(77);
    expect(r.code).toBe(3);
  });
});
