import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerTo, initialize, line, readsHome, type ReadsHome } from '../attack22/reads-helpers.js';

// Review 26 (issue 26 class e, caps on hostile-driven work): a resources/read through a resource template is
// admitted by an RFC 6570 match (surface/uri-template.ts), bounded per template (512 characters, 32
// expressions, an 8,192-character URI), but not in how many templates one read walks: ReadAdmission.read
// (surface/read-admission.ts:65-77) tries every template the listing REFUSED first (throughTemplate('changed')),
// then every admitted one, and a listing may hold up to maxTools = 10,000 templates per kind. A server in
// enforce lists 10,000 added templates of 32 `{+vN}` expressions each (each refused, each kept with its matcher),
// and every read through its honest locked template walks them all. Measured on this build (node 24,
// process.cpuUsage, dist/surface/read-admission.js): listing them costs the judge 4,212 ms of CPU (each listing:
// the handshake, and on 2026-07-28 each subscribed list change), and one read then 1,677 ms for a 40-character
// URI, 6,585 ms for 200, 32,421 ms for 1,000: the warden's one thread relays nothing meanwhile. The test uses
// 3,000 templates and a 100-character URI (the read: ~1.3 s) and asks for a read decided within 200 ms of the
// warden's CPU, admitted or refused.

let h: ReadsHome;
beforeAll(() => {
  h = readsHome();
});
afterAll(() => h.cleanup());

const HONEST_TEMPLATES = [
  { uriTemplate: 'tickets://{id}', name: 'ticket', description: 'A ticket by id.' },
  { uriTemplate: 'docs://{+path}{?rev}', name: 'doc', description: 'A document at a revision.' },
];
const heavy = (i: number): { uriTemplate: string; name: string } => ({ uriTemplate: Array.from({ length: 32 }, (_, j) => `{+v${j}}`).join('') + `/${i}`, name: `t${i}` });

/** The CPU time (user + system, ms) the process has used, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

describe('a resources/read through a locked template while the server lists thousands of added templates', () => {
  it('is decided within a bounded cost: refused, the listing holding more templates than a read walks', async () => {
    h.serve({ resourceTemplates: [...HONEST_TEMPLATES, ...Array.from({ length: 3000 }, (_, i) => heavy(i))] });
    const s = h.session();
    s.send(initialize(1));
    expect((await answerTo(s, 1)).result).toBeDefined();
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const pid = s.proc.pid as number;
    const before = cpuMs(pid);
    const uri = `tickets://${'4'.repeat(90)}`;
    s.send(line('r', 'resources/read', { uri }));
    const answer = await answerTo(s, 'r');
    const spent = cpuMs(pid) - before;
    s.close();
    await s.exited;
    const admitted = (answer.result as { contents?: { uri?: string }[] } | undefined)?.contents?.[0]?.uri === uri;
    const refused = (answer.error as { code?: number } | undefined)?.code === -32001;
    expect(admitted || refused).toBe(true);
    expect(spent).toBeLessThan(200);
  });
});
