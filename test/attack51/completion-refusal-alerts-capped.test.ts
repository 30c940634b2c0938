import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../helpers/warden.js';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 28 (issue 26 class e, item 16's cause on review 26's new refusal): a client's argument picker sends
// completion/complete as the user types, one per keystroke. Since review 26 a completion of a prompt the session
// refuses (changed since the lock) is answered by refuseRead (src/proxy/client-refusals.ts:114-122), which writes
// a `read_refused` audit event, an alert (src/alert/event.ts: every read_refused: a webhook request, an exec
// sink's process) and a report line for every one, with no cap: a server that drifts one prompt turns each
// keystroke of the user into an alert. Listing pages refused are recorded 5 times per session, then counted
// (server-reports.ts PAGES_RECORDED, reports_capped). Expected: completions refused for the same item recorded a
// bounded number of times per session (here: at most 16 of 60), the rest counted.

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

const complete = (id: string, value: string): string => line(id, 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value } });

describe('completions of a refused prompt typed one keystroke at a time', () => {
  it('are each refused (-32001), and recorded as alerts a bounded number of times per session', async () => {
    h.serve({ prompts: [{ name: 'greet', description: `Greets the user. ${MARKER}`, arguments: [{ name: 'who', required: false }] }] });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const typed = 'alexander-the-great-of-macedon-who-conquered-the-persian-empire'.slice(0, 60);
    s.send(Array.from(typed, (_, i) => complete(`c${i}`, typed.slice(0, i + 1))).join(''));
    const last = await answerTo(s, `c${typed.length - 1}`);
    s.close();
    await s.exited;
    expect(last.error).toMatchObject({ code: -32001 });
    expect(h.received().map((m) => m.method)).not.toContain('completion/complete');
    const refused = auditEvents(h.home).filter((e) => e.event === 'read_refused');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(16);
  });
});
