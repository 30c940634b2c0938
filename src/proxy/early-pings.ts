// A server may ping the client at any time, also before the session is released. The warden lets those pings
// through at once and relays no request, the client's or its own, until the client has answered them. Held
// until the release, a pong would tell the server when the handshake (the warden's listing and canaries) is
// over; and if only the warden's requests waited for pongs, a request arriving while a ping is unanswered
// would be the client's (docs/adr/0012). A client that does not answer within the bound is not waited for
// again.

export class EarlyPings {
  private readonly open = new Set<string>();
  private waiters: (() => void)[] = [];

  constructor(private readonly maxWaitMs = 2000) {}

  get pending(): boolean {
    return this.open.size > 0;
  }

  /** A ping (its id as JSON text) was passed to the client. */
  passed(id: string): void {
    this.open.add(id);
  }

  /** True when `id` answers a ping that was passed; the warden's requests go on once none is open. */
  settle(id: string): boolean {
    if (!this.open.delete(id)) return false;
    if (this.open.size === 0) this.release();
    return true;
  }

  /** Resolves once every passed ping is answered, or after the bound (then they are forgotten). */
  answered(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.open.clear();
        this.release();
      }, this.maxWaitMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private release(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
