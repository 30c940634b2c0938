import type { Progress } from './progress.js';

// When the daemon sweeps orphaned sessions (docs/operations.md, "The daemon"): once at start, then every
// minute, and on request (a `run` whose connection dropped has left /proc). One sweep at a time; a request that
// arrives during a sweep (which may have read run/ too early) gets one more sweep after it. Each completed
// round is a beat of the watchdog's "orphan sweep" loop.

export const SWEEP_EVERY_MS = 60_000;
const LOOP = 'orphan sweep';

export class Sweeper {
  private sweeping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sweepOnce: () => Promise<void>,
    private readonly progress: Progress,
    private readonly say: (m: string) => void,
    private readonly everyMs = SWEEP_EVERY_MS,
  ) {}

  /** Sweeps once (awaited: a failure is the caller's), then every `everyMs`; the watchdog expects a completed
   *  round at least every three intervals. */
  async start(): Promise<void> {
    this.sweeping = true;
    try {
      await this.sweepOnce();
    } finally {
      this.sweeping = false;
    }
    this.progress.expectEvery(LOOP, 3 * this.everyMs);
    this.timer = setInterval(() => this.request(), this.everyMs);
    if (this.again) {
      this.again = false;
      this.request();
    }
  }

  /** Sweeps now, or once more after the sweep under way. */
  request(): void {
    if (this.sweeping) {
      this.again = true;
      return;
    }
    this.sweeping = true;
    void this.sweepOnce()
      .catch((err: Error) => this.say(`orphan sweep failed: ${err.message}`))
      .finally(() => {
        this.sweeping = false;
        this.progress.beat(LOOP);
        if (this.again) {
          this.again = false;
          this.request();
        }
      });
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
