// A server may ping the client at any time, also before the session is released. The warden lets those pings
// through at once and relays no request, the client's or its own, until the client has answered them. Held
// until the release, a pong would tell the server when the handshake (the warden's listing and canaries) is
// over; and if only the warden's requests waited for pongs, a request arriving while a ping is unanswered
// would be the client's (docs/adr/0012). A client that does not answer within the bound is not waited for
// again. What is kept of the pings still open is bounded: past MAX_OPEN ids or MAX_OPEN_BYTES of them, the
// oldest is forgotten as if its wait had run out (a ping's id can be megabytes, and one a client writes back in
// another form of the same number never settles: test/attack12/ping-ids). Forgetting holds back the client's
// requests and the warden's alike, so it tells the server nothing about whose a request is.

/** Pings kept open at most, and the bytes of their ids. */
const MAX_OPEN = 64;
const MAX_OPEN_BYTES = 64 * 1024;

export class EarlyPings {
  /** The open pings' ids, oldest first. */
  private readonly open = new Set<string>();
  private openBytes = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly maxWaitMs = 2000) {}

  get pending(): boolean {
    return this.open.size > 0;
  }

  /** A ping (its id as JSON text) was passed to the client. */
  passed(id: string): void {
    if (id.length > MAX_OPEN_BYTES || this.open.has(id)) return; // (too long to keep: as if its wait ran out at once)
    this.open.add(id);
    this.openBytes += id.length;
    for (const oldest of this.open) {
      if (this.open.size <= MAX_OPEN && this.openBytes <= MAX_OPEN_BYTES) break;
      this.forget(oldest);
    }
  }

  /** True when `id` answers a ping that was passed; the warden's requests go on once none is open. */
  settle(id: string): boolean {
    if (!this.open.has(id)) return false;
    this.forget(id);
    if (this.open.size === 0) this.release();
    return true;
  }

  private forget(id: string): void {
    if (this.open.delete(id)) this.openBytes -= id.length;
  }

  /** Resolves once every passed ping is answered, or after the bound (then they are forgotten). */
  answered(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.open.clear();
        this.openBytes = 0;
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
