import { describe, expect, it } from 'vitest';
import { Progress } from '../../src/daemon/progress.js';

// When the watchdog ping is withheld: the policy on its own, on a clock the test moves.

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('what counts as the daemon making progress', () => {
  it('is healthy while a loop completes rounds within its interval', () => {
    const c = clock();
    const p = new Progress(c.now);
    p.expectEvery('orphan sweep', 180_000);
    for (let i = 0; i < 5; i++) {
      c.advance(60_000);
      p.beat('orphan sweep');
      expect(p.stalled()).toEqual([]);
    }
  });

  it('reports a loop that completed no round for longer than its interval', () => {
    const c = clock();
    const p = new Progress(c.now);
    p.expectEvery('orphan sweep', 180_000);
    c.advance(180_001);
    expect(p.stalled()).toEqual(['orphan sweep: no round completed for 180 s']);
  });

  it('reports a task running past its bound, and forgets it once finished', () => {
    const c = clock();
    const p = new Progress(c.now);
    const done = p.begin("verification of 'basic'", 600_000);
    c.advance(600_001);
    expect(p.stalled()).toEqual(["verification of 'basic': running for 600 s"]);
    done();
    expect(p.stalled()).toEqual([]);
  });

  it('reports an unhealthy probe', () => {
    let listening = true;
    const p = new Progress();
    p.probe('event socket', () => listening);
    expect(p.stalled()).toEqual([]);
    listening = false;
    expect(p.stalled()).toEqual(['event socket: not healthy']);
  });
});
