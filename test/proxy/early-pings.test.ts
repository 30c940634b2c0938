import { describe, expect, it } from 'vitest';
import { EarlyPings } from '../../src/proxy/early-pings.js';

// The pings a server passed to the client, kept open until the client answers them: bounded in count and bytes
// (test/attack12/ping-ids), the oldest forgotten as if its wait had run out.

describe('the open pings', () => {
  it('keep at most 64 ids, forgetting the oldest', async () => {
    const p = new EarlyPings(60_000);
    for (let i = 0; i < 100; i++) p.passed(String(i));
    expect(p.settle('0')).toBe(false); // forgotten
    expect(p.settle('35')).toBe(false);
    for (let i = 36; i < 99; i++) expect(p.settle(String(i))).toBe(true);
    expect(p.pending).toBe(true);
    const waited = p.answered();
    expect(p.settle('99')).toBe(true);
    await waited;
    expect(p.pending).toBe(false);
  });

  it('keep at most 64 KiB of ids, and none longer than that', () => {
    const p = new EarlyPings(60_000);
    p.passed(`"${'x'.repeat(70_000)}"`);
    expect(p.pending).toBe(false);
    const ids = Array.from({ length: 5 }, (_, i) => `"${String(i).repeat(20_000)}"`);
    for (const id of ids) p.passed(id);
    expect(p.settle(ids[0] as string)).toBe(false);
    expect(p.settle(ids[1] as string)).toBe(false);
    for (const id of ids.slice(2)) expect(p.settle(id)).toBe(true);
    expect(p.pending).toBe(false);
  });
});
