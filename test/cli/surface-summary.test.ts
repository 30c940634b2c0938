import { afterEach, describe, expect, it } from 'vitest';
import { opened, request, shapeshifter, toolNames, type Shifter } from '../helpers/surface.js';
import { auditEvents } from '../helpers/warden.js';

// A listing with thousands of changed tools is summarized on stderr past a handful of lines; the audit log
// keeps the server and the counts even when the event is over its line cap.

let sh: Shifter | undefined;
afterEach(() => sh?.cleanup());

const tool = (name: string): Record<string, unknown> => ({ name, description: `Tool ${name}.`, inputSchema: { type: 'object' } });

describe('a listing with thousands of added tools', () => {
  it('prints the first ten, then one summary line naming the count and the diff command', async () => {
    sh = shapeshifter({ toolsRaw: JSON.stringify([tool('kept')]) });
    const many = [tool('kept'), ...Array.from({ length: 9_999 }, (_, i) => tool(`t${i}`))];
    sh.serve({ toolsRaw: JSON.stringify(many) });
    const s = sh.session();
    await opened(s);
    expect(toolNames(await request(s, 'tools/list'))).toEqual(['kept']);
    s.close();
    expect((await s.exited).code).toBe(0);
    const added = s.stderr.split('\n').filter((l) => / added/.test(l) && /tool "/.test(l));
    expect(added.length).toBeLessThanOrEqual(10);
    expect(s.stderr).toMatch(/… and 9,98\d more added tools?.*mcp-warden diff shifty/);
    expect(s.stderr.split('\n').length).toBeLessThan(40);
    const surface = auditEvents(sh.home).find((e) => e.event === 'surface' && e.source === 'handshake') as Record<string, unknown> & { truncation?: Record<string, unknown> };
    expect(surface).toMatchObject({ server: 'shifty', pinState: 'changed', truncated: true, truncation: { field: 'changed', items: 9_999 } });
  });

  it('prints a name with terminal control characters escaped', async () => {
    sh = shapeshifter({ toolsRaw: JSON.stringify([tool('kept')]) });
    sh.serve({ toolsRaw: JSON.stringify([tool('kept'), tool('evil\u009b31m\u202ename')]) });
    const s = sh.session();
    await opened(s);
    s.close();
    await s.exited;
    expect(s.stderr).toContain('evil\\u009b31m\\u202ename');
    expect(s.stderr).not.toContain('\u009b');
    expect(s.stderr).not.toContain('\u202e');
  });
});
