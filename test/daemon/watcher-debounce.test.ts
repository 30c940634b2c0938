import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ParentDirWatcher } from '../../src/daemon/watcher.js';

// Review 15, finding 4: the watcher coalesced the events of one key over 50 ms by restarting the timer on every
// event, with no maximum wait: a process writing the watched file without a 50 ms pause delayed the daemon's
// re-check for as long as it kept writing. The watcher is driven directly (its event entry point, as fs.watch
// calls it) on a clock of the test's own: deterministic, no sleeps.

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-debounce-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

describe('the watcher under a stream of events for one watched file', () => {
  it('re-checks at most 50 ms after the first pending event, however often the file keeps changing', async () => {
    vi.useFakeTimers();
    const calls: number[] = [];
    const start = Date.now();
    const watcher = new ParentDirWatcher((key) => key === 'server' && calls.push(Date.now() - start), 50);
    const file = path.join(dir, 'server.mjs');
    await watcher.set([{ path: file, keys: ['server'] }]);
    const event = (watcher as unknown as { event(d: string, n: string | undefined): void }).event.bind(watcher);
    // An event every 10 ms for 300 ms: never a pause of 50 ms.
    for (let t = 0; t < 300; t += 10) {
      event(dir, 'server.mjs');
      vi.advanceTimersByTime(10);
    }
    expect(calls[0], 'the first re-check').toBeLessThanOrEqual(50);
    // Each later one within 50 ms of the event that opened its window: one per window, not one per event.
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.length).toBeLessThanOrEqual(6);
    await watcher.close();
  });

  it('still coalesces a burst that pauses: one re-check for events within 50 ms', async () => {
    vi.useFakeTimers();
    const calls: string[] = [];
    const watcher = new ParentDirWatcher((key, changed) => calls.push(`${key} ${changed}`), 50);
    const file = path.join(dir, 'other.mjs');
    await watcher.set([{ path: file, keys: ['other'] }]);
    const event = (watcher as unknown as { event(d: string, n: string | undefined): void }).event.bind(watcher);
    for (let i = 0; i < 4; i++) {
      event(dir, 'other.mjs');
      vi.advanceTimersByTime(5);
    }
    vi.advanceTimersByTime(200);
    expect(calls).toEqual([`other ${file}`]);
    await watcher.close();
  });
});
