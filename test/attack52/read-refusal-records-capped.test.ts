import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../helpers/warden.js';
import { MARKER, answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 30 (issue 26 class e, item 16's cause on the reads): review 28 capped refused completions at 5 records
// per item and session (src/proxy/client-refusals.ts:127-131 recordCompletion), because a client sends them in a
// loop. A refused prompts/get or resources/read of the same item is recorded every time
// (client-refusals.ts:129-130: one `read_refused` audit event, and so one alert — src/alert/event.ts:22 alerts
// every read_refused — and one report line each, uncapped): a model steered by the server's own tool output
// to retry "get the prompt 'greet'" turns every retry into an alert, fills each sink's 64 waiting slots
// (src/alert/dispatch.ts:15,44: past them the NEW alert is dropped and only counted), so an alert the server
// drives right after (module_refused, binary_changed...) is dropped. Expected: refused reads of one item
// recorded a bounded number of times per session (here: at most 16 of 60), each still refused (-32001).

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

describe('a refused prompt got again and again in one session', () => {
  it('is refused each time (-32001), and recorded as read_refused a bounded number of times', async () => {
    h.serve({ prompts: [{ name: 'greet', description: `Greets the user. ${MARKER}`, arguments: [{ name: 'who', required: false }] }] });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const n = 60;
    s.send(Array.from({ length: n }, (_, i) => line(`g${i}`, 'prompts/get', { name: 'greet', arguments: { who: `try ${i}` } })).join(''));
    const last = await answerTo(s, `g${n - 1}`);
    s.close();
    await s.exited;
    expect(last.error).toMatchObject({ code: -32001 });
    expect(h.received().map((m) => m.method)).not.toContain('prompts/get');
    const refused = auditEvents(h.home).filter((e) => e.event === 'read_refused');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(16);
  });
});
