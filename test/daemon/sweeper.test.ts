import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Progress } from '../../src/daemon/progress.js';
import { SWEEP_EVERY_MS, Sweeper } from '../../src/daemon/sweeper.js';

// When the daemon sweeps orphaned sessions: at start, every minute, and on request, one sweep at a time. The
// schedule on its own, on a clock the test moves (vi's fake timers); the sweep itself is a function the test
// counts. That the daemon sweeps a real orphan at start is test/daemon/sweep.test.ts, with a real daemon.

let sweeper: Sweeper | undefined;
beforeEach(() => void vi.useFakeTimers());
afterEach(() => {
  sweeper?.stop();
  sweeper = undefined;
  vi.useRealTimers();
});

/** A sweep the test finishes by hand: `calls` started, `running` at once (at most), `finish()` ends the oldest. */
function manualSweep(): { fn: () => Promise<void>; calls: () => number; most: () => number; finish: (err?: Error) => Promise<void> } {
  const open: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let calls = 0;
  let most = 0;
  return {
    fn: () =>
      new Promise<void>((resolve, reject) => {
        calls++;
        open.push({ resolve, reject });
        most = Math.max(most, open.length);
      }),
    calls: () => calls,
    most: () => most,
    finish: async (err) => {
      const s = open.shift();
      if (err) s?.reject(err);
      else s?.resolve();
      await vi.advanceTimersByTimeAsync(0); // let the sweep's continuations run
    },
  };
}

describe("the daemon's orphan sweeps", () => {
  it('sweeps once before start() resolves, then every minute', async () => {
    let sweeps = 0;
    sweeper = new Sweeper(async () => void sweeps++, new Progress(), () => {});
    await sweeper.start();
    expect(sweeps).toBe(1);
    await vi.advanceTimersByTimeAsync(SWEEP_EVERY_MS - 1);
    expect(sweeps).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sweeps).toBe(2);
    await vi.advanceTimersByTimeAsync(3 * SWEEP_EVERY_MS);
    expect(sweeps).toBe(5);
    expect(SWEEP_EVERY_MS).toBe(60_000); // "every minute" (docs/operations.md)
  });

  it('never runs two sweeps at once: one asked for during a sweep runs once after it', async () => {
    const s = manualSweep();
    sweeper = new Sweeper(s.fn, new Progress(), () => {});
    const started = sweeper.start();
    sweeper.request(); // a run's connection dropped during the start sweep
    sweeper.request();
    expect(s.calls()).toBe(1);
    await s.finish();
    await started;
    expect(s.calls()).toBe(2); // the requests, folded into one
    await vi.advanceTimersByTimeAsync(SWEEP_EVERY_MS); // the minute comes while that one still runs
    expect(s.calls()).toBe(2);
    await s.finish();
    expect(s.calls()).toBe(3);
    await s.finish();
    expect(s.most()).toBe(1);
  });

  it('reports a failed sweep and sweeps again the next minute', async () => {
    const s = manualSweep();
    const said: string[] = [];
    sweeper = new Sweeper(s.fn, new Progress(), (m) => said.push(m));
    const started = sweeper.start();
    await s.finish();
    await started;
    await vi.advanceTimersByTimeAsync(SWEEP_EVERY_MS);
    await s.finish(new Error('run/ is writable by others'));
    expect(said).toEqual(['orphan sweep failed: run/ is writable by others']);
    await vi.advanceTimersByTimeAsync(SWEEP_EVERY_MS);
    expect(s.calls()).toBe(3);
  });

  it('keeps the watchdog fed while rounds complete, and lets it starve three minutes after they stop', async () => {
    const progress = new Progress(); // Date.now is the fake clock too
    let hang = false;
    sweeper = new Sweeper(() => (hang ? new Promise<void>(() => {}) : Promise.resolve()), progress, () => {});
    await sweeper.start();
    await vi.advanceTimersByTimeAsync(10 * SWEEP_EVERY_MS);
    expect(progress.stalled()).toEqual([]);
    hang = true; // the next sweep (at the next minute) never completes; the last round completed now
    await vi.advanceTimersByTimeAsync(3 * SWEEP_EVERY_MS);
    expect(progress.stalled()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(progress.stalled()).toEqual(['orphan sweep: no round completed for 180 s']);
  });
});
