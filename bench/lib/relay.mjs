// Relay measures on live sessions: round-trip latency, bulk throughput, the relaying process's memory.
import { memory, open } from './session.mjs';
import { summary } from './stats.mjs';

const MIB = 1024 * 1024;

/** Opens one session per side (in turn); closes all if one fails. */
async function openAll(sides) {
  const out = {};
  try {
    for (const [name, side] of Object.entries(sides)) out[name] = await open(side);
    return out;
  } catch (err) {
    await Promise.all(Object.values(out).map((s) => s.close()));
    throw err;
  }
}

/**
 * Blocks of `block` calls in a row on one session (a client talks to one server at a time), then the next side,
 * so that drift in machine load hits all sides alike. `call(s, i)` makes one call; the first `warmup` calls of
 * each side are not counted. Returns per side the ms of each counted call and the wall time of those calls.
 */
async function alternate(sessions, { calls, block, warmup }, call) {
  const names = Object.keys(sessions);
  for (let done = 0; done < warmup; done += block) for (const n of names) for (let i = done; i < Math.min(done + block, warmup); i++) await call(sessions[n], i - warmup);
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  const wall = Object.fromEntries(names.map((n) => [n, 0]));
  for (let done = 0; done < calls; done += block) {
    for (const n of names) {
      const t0 = process.hrtime.bigint();
      for (let i = done; i < Math.min(done + block, calls); i++) {
        const t = process.hrtime.bigint();
        await call(sessions[n], i);
        ms[n].push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      wall[n] += Number(process.hrtime.bigint() - t0) / 1e6;
    }
  }
  return { ms, wall };
}

/** tools/call echo round trips; returns { side: summary(ms) }. */
export async function roundTrips(sides, { calls, block = 100, warmup = 200 }) {
  const sessions = await openAll(sides);
  try {
    const echo = async (s, i) => {
      const r = await s.request('tools/call', { name: 'echo', arguments: { message: `round ${i}` } });
      if (!r.result || r.result.isError) throw new Error(`echo: ${JSON.stringify(r).slice(0, 300)}`);
    };
    const { ms } = await alternate(sessions, { calls, block, warmup }, echo);
    return Object.fromEntries(Object.entries(ms).map(([n, v]) => [n, summary(v)]));
  } finally {
    await Promise.all(Object.values(sessions).map((s) => s.close()));
  }
}

/**
 * tools/call results of `bytes` each, one call at a time, in alternating blocks. MB/s (10^6 bytes) of result
 * lines received over the wall time of the counted calls; memory of the session's own process at the end.
 */
export async function bulk(sides, { calls, block = 8, warmup = 4, bytes = MIB }) {
  const sessions = await openAll(sides);
  try {
    const big = async (s) => {
      const r = await s.request('tools/call', { name: 'bulk', arguments: { bytes } });
      if (!(r.bytes > bytes)) throw new Error(`bulk: expected a line over ${bytes} bytes, got ${JSON.stringify(r).slice(0, 300)}`);
      s.lineBytes = r.bytes + 1;
    };
    const { ms, wall } = await alternate(sessions, { calls, block, warmup }, big);
    return Object.fromEntries(
      Object.entries(ms).map(([n, v]) => [n, { mbps: (v.length * sessions[n].lineBytes) / 1e6 / (wall[n] / 1000), callMs: summary(v), ...memory(sessions[n].pid) }]),
    );
  } finally {
    await Promise.all(Object.values(sessions).map((s) => s.close()));
  }
}

/** RSS of each side's own process (the relay, not its server) after `calls` echo calls, taken in alternating blocks. */
export async function relayMemory(sides, { calls, block = 100 }) {
  const sessions = await openAll(sides);
  try {
    const start = Object.fromEntries(Object.entries(sessions).map(([n, s]) => [n, memory(s.pid)]));
    const echo = (s, i) => s.request('tools/call', { name: 'echo', arguments: { message: `call ${i}` } });
    await alternate(sessions, { calls, block, warmup: 0 }, echo);
    return Object.fromEntries(Object.entries(sessions).map(([n, s]) => [n, { atStart: start[n], ...memory(s.pid) }]));
  } finally {
    await Promise.all(Object.values(sessions).map((s) => s.close()));
  }
}
