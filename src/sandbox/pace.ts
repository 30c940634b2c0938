// Two small limits of the egress proxy (sandbox/egress-proxy.ts), both by waiting rather than refusing: a token
// bucket for how often a session may open connections, and a count of lookups in flight.

/** Runs tasks at most `perSecond` a second once `burst` have run at once; later ones wait in order. */
export class Pace {
  private tokens: number;
  private last = performance.now();
  private readonly waiting: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly burst: number, private readonly perSecond: number) {
    this.tokens = burst;
  }

  /** Runs `task` now if a token is free and nothing waits before it, else when its turn comes. */
  run(task: () => void): void {
    this.waiting.push(task);
    this.drain();
  }

  /** Drops what waits (the session is over). */
  stop(): void {
    this.waiting.length = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private drain(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    while (this.waiting.length > 0 && this.tokens >= 1) {
      this.tokens -= 1;
      (this.waiting.shift() as () => void)();
    }
    if (this.waiting.length > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.drain();
      }, Math.ceil(((1 - this.tokens) * 1000) / this.perSecond));
      this.timer.unref();
    }
  }
}

/** At most `limit` of what it runs in flight at once; the rest wait in order. */
export class Gate {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.inFlight++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }
}
