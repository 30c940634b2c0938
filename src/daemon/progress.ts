// What "the daemon's loops make progress" means, for the systemd watchdog: WATCHDOG=1 is sent only while
// every periodic loop has completed a round recently enough, no task (a scheduled verification, a reload) has
// been running for longer than its bound, and every probe (the listening sockets) is healthy. A daemon whose
// event loop runs but whose work is stuck therefore stops pinging and is restarted by systemd.

export class Progress {
  private readonly loops = new Map<string, { everyMs: number; last: number }>();
  private readonly tasks = new Map<number, { name: string; maxMs: number; since: number }>();
  private readonly probes = new Map<string, () => boolean>();
  private nextTask = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** A loop expected to complete a round at least every `everyMs`; counted from now. */
  expectEvery(loop: string, everyMs: number): void {
    this.loops.set(loop, { everyMs, last: this.now() });
  }

  /** `loop` is no longer expected (its schedule was removed). */
  forget(loop: string): void {
    this.loops.delete(loop);
  }

  /** A round of `loop` completed. */
  beat(loop: string): void {
    const l = this.loops.get(loop);
    if (l) l.last = this.now();
  }

  /** A task that must finish within `maxMs`; returns the function that marks it finished. */
  begin(name: string, maxMs: number): () => void {
    const id = this.nextTask++;
    this.tasks.set(id, { name, maxMs, since: this.now() });
    return () => void this.tasks.delete(id);
  }

  /** A condition that must hold (e.g. a socket still listening). */
  probe(name: string, healthy: () => boolean): void {
    this.probes.set(name, healthy);
  }

  /** What is stuck now, in words; empty when everything makes progress. */
  stalled(): string[] {
    const now = this.now();
    const out: string[] = [];
    for (const [loop, l] of this.loops) if (now - l.last > l.everyMs) out.push(`${loop}: no round completed for ${Math.round((now - l.last) / 1000)} s`);
    for (const t of this.tasks.values()) if (now - t.since > t.maxMs) out.push(`${t.name}: running for ${Math.round((now - t.since) / 1000)} s`);
    for (const [name, healthy] of this.probes) if (!healthy()) out.push(`${name}: not healthy`);
    return out;
  }
}
