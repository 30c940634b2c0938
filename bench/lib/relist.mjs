// The cost of periodic re-listing (ADR 0008) on echo round trips through `mcp-warden run` of server-everything:
// one session per setting of relistEvery.calls, plus a baseline session that never re-lists, all live at once
// and called in alternating blocks, in a temporary home (made and removed here, or one the caller made).
import path from 'node:path';
import { removeDir, tempDir } from './procs.mjs';
import { open } from './session.mjs';
import { add, configure, EVERYTHING, RELAY_NODE, WARDEN } from './setup.mjs';
import { summary } from './stats.mjs';

export const NEVER = 'never';

/**
 * { every: [50, 200], calls, block, warmup } → { [every|'never']: summary(ms) }. With `home` (a temporary home
 * the caller made, with server-everything enrolled as `id`), that server's relistEvery is changed for the
 * measure and put back after; without, a temporary home is made and removed here.
 */
export async function relistCost({ every = [50, 200], calls = 2000, block = 100, warmup = 200, home, id = 'everything' } = {}) {
  const dir = home ? undefined : tempDir('warden-relist-');
  const sessions = {};
  let saved;
  try {
    if (!home) {
      home = path.join(dir, 'home');
      add(WARDEN, home, id, [EVERYTHING, 'stdio']);
    }
    configure(home, id, (s) => (saved = s.relistEvery));
    // Each session reads servers.json when it starts: set, start, set the next, start the next.
    for (const n of [NEVER, ...every]) {
      configure(home, id, (s) => (s.relistEvery = n === NEVER ? { calls: 2 ** 31 - 1, seconds: 1e9 } : { calls: n, seconds: 1e9 }));
      sessions[n] = await open([RELAY_NODE, [WARDEN, '--home', home, 'run', id]]);
    }
    const names = Object.keys(sessions);
    const ms = Object.fromEntries(names.map((n) => [n, []]));
    const echo = async (s, i) => {
      const r = await s.request('tools/call', { name: 'echo', arguments: { message: `call ${i}` } });
      if (!r.result || r.result.isError) throw new Error(`echo: ${JSON.stringify(r).slice(0, 300)}`);
    };
    for (let done = -warmup; done < calls; done += block) {
      for (const n of names) {
        for (let i = done; i < Math.min(done + block, calls); i++) {
          const t = process.hrtime.bigint();
          await echo(sessions[n], i);
          if (i >= 0) ms[n].push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      }
    }
    return Object.fromEntries(names.map((n) => [n, summary(ms[n])]));
  } finally {
    await Promise.all(Object.values(sessions).map((s) => s.close()));
    if (dir) removeDir(dir);
    else if (saved) configure(home, id, (s) => (s.relistEvery = saved));
  }
}
