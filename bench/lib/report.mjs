// The Markdown report of bench/run.mjs, from its results object (the same as bench/out/results.json).
import { fmt, signed, table, target } from './stats.mjs';
import { LABEL } from './setup.mjs';

/** Issue 13's targets (launch: docs/performance.md's "+60 ms with a warm cache", taken against the raw relay). */
export const TARGETS = {
  // Issue 13's targets. Launch: warden − raw relay, spawn → initialize result, p50, per server.
  launchP50Ms: { basic: 30, everything: 60 },
  concurrentRatio: 1.2, // warden / raw relay, 10 at once, median
  relayP50Ms: 0.05, // warden − raw relay, tools/call round trip
  relayP99Ms: 0.5,
  bulkRatio: 0.8, // warden / raw relay MB/s
  rssMb: 10, // warden − raw relay VmRSS after 1,000 calls
  listingRatio: 2, // admit a 1,000-tool listing, against the floor on the same input
  digestRatio: 1.0, // warden / openssl MB/s
};

const SERVER = { basic: 'one-file server (test/servers/basic.mjs)', everything: 'server-everything (installed tree)' };

/** Columns per side present in `r` (direct, raw, warden, before?). */
const sidesOf = (r) => ['direct', 'raw', 'warden', 'before'].filter((s) => r[s] !== undefined);
const cellsFor = (r, pick, digits) => sidesOf(r).map((s) => fmt(pick(r[s]), digits));
const header = (r, lead, extra) => [lead, ...sidesOf(r).map((s) => LABEL[s]), ...extra];

function launch(l, o) {
  const out = [];
  const any = l.basic ?? l.everything;
  const extra = ['warden − raw relay', ...(any.before ? ['warden − before'] : [])];
  const rows = [];
  for (const [server, r] of Object.entries(l)) {
    for (const q of ['p50', 'p90']) {
      const d = r.warden[q] - r.raw[q];
      rows.push({
        cells: [`${SERVER[server]} ${q}`, ...cellsFor(r, (s) => s[q], 0), signed(d, 0), ...(r.before ? [signed(r.warden[q] - r.before[q], 0)] : [])],
        target: q === 'p50' ? target(d, '<=', TARGETS.launchP50Ms[server], `≤ +${TARGETS.launchP50Ms[server]}`) : undefined,
      });
    }
  }
  out.push(
    table(`Launch: spawn → initialize result (ms), ${o.launches} launches per side, interleaved, ${o.launchWarmup} warm-up per side`, header(any, 'server', extra), rows, [
      'Each round launches every side once, in a rotating order; a launch ends when the initialize result arrives (the session is then closed, untimed).',
      `Targets (issue 13): the warden's own work, over a raw relay, warm cache: +${TARGETS.launchP50Ms.basic} ms on the one-file server, +${TARGETS.launchP50Ms.everything} ms on server-everything.`,
    ]),
  );
  return out.join('\n');
}

function concurrent(c, o) {
  const rows = Object.entries(c).map(([server, r]) => {
    const ratio = r.warden.p50 / r.raw.p50;
    return { cells: [`${SERVER[server]}, median`, ...cellsFor(r, (s) => s.p50, 0), `${fmt(ratio, 2)}×`], target: target(ratio, '<=', TARGETS.concurrentRatio, `≤ ${TARGETS.concurrentRatio}×`) };
  });
  const any = Object.values(c)[0];
  return table(`${o.concurrent} servers launched at once: ms until all ${o.concurrent} have their initialize result, ${o.concurrentRounds} rounds per side, interleaved, ${o.concurrentWarmup} warm-up round per side`, header(any, 'server', ['warden / raw relay']), rows, [
    `The ${o.concurrent} sessions of a round are of the same server (for the warden, the same server id).` + (o.quick ? ' (--quick: the one-file server only.)' : ''),
  ]);
}

function relay(r, o) {
  const row = (q, t) => ({
    cells: [`${q}`, ...cellsFor(r, (s) => s[q], 3), signed(r.warden[q] - r.raw[q], 3), ...(r.before ? [signed(r.warden[q] - r.before[q], 3)] : [])],
    target: t && target(r.warden[q] - r.raw[q], '<=', t, `≤ +${t}`),
  });
  return table(`Relay: tools/call echo round trip (ms), server-everything, ${o.rounds} calls per side in alternating blocks of 100`, header(r, 'quantile', ['warden − raw relay', ...(r.before ? ['warden − before'] : [])]), [
    row('p50', TARGETS.relayP50Ms),
    row('p90'),
    row('p99', TARGETS.relayP99Ms),
  ]);
}

function bulk(b, o) {
  const ratio = b.warden.mbps / b.raw.mbps;
  return table(`Bulk: tools/call results of 1 MiB (bench/servers/bulk.mjs), ${o.bulkCalls} calls per side, one at a time, in alternating blocks of 8`, header(b, 'measure', ['warden / raw relay']), [
    { cells: ['MB/s (10^6 bytes of result lines per second)', ...cellsFor(b, (s) => s.mbps, 0), `${fmt(ratio, 2)}×`], target: target(ratio, '>=', TARGETS.bulkRatio, `≥ ${TARGETS.bulkRatio}×`) },
    { cells: ['call p50 ms', ...cellsFor(b, (s) => s.callMs.p50, 2), ''] },
    { cells: ['VmRSS MB of the session process after the calls (direct: the server)', ...cellsFor(b, (s) => s.rssMb, 1), ''] },
    { cells: ['VmHWM MB (peak)', ...cellsFor(b, (s) => s.hwmMb, 1), ''] },
  ]);
}

function rss(m, o) {
  const d = m.warden.rssMb - m.raw.rssMb;
  // With --before, that build's relay beside them (same interleaving), and its difference to the raw relay.
  const b = m.before;
  const more = (f) => (b ? [fmt(f(b)), signed(f(b) - f(m.raw))] : []);
  const head = ['/proc/PID/status', 'raw relay', 'mcp-warden run', 'warden − raw relay', ...(b ? ['--before build', 'before − raw relay'] : [])];
  return table(`Memory of the relaying process itself (not the server), server-everything, ${o.rssCalls} echo calls per side`, head, [
    { cells: ['VmRSS MB at session start (after tools/list)', fmt(m.raw.atStart.rssMb), fmt(m.warden.atStart.rssMb), signed(m.warden.atStart.rssMb - m.raw.atStart.rssMb), ...more((s) => s.atStart.rssMb)] },
    { cells: [`VmRSS MB after ${o.rssCalls} calls`, fmt(m.raw.rssMb), fmt(m.warden.rssMb), signed(d), ...more((s) => s.rssMb)], target: target(d, '<=', TARGETS.rssMb, `≤ +${TARGETS.rssMb} MB`) },
    { cells: ['VmHWM MB (peak)', fmt(m.raw.hwmMb), fmt(m.warden.hwmMb), signed(m.warden.hwmMb - m.raw.hwmMb), ...more((s) => s.hwmMb)] },
  ]);
}

function listing(ls) {
  return table(`Admit a 1,000-tool listing (${(ls.bytes / 1024).toFixed(0)} KiB of real tools from the corpus), median of 25 runs`, ['measure', 'floor: JSON.parse + JSON.stringify + sha256 per tool', 'mcp-warden: lossless parse, RFC 8785 + exact digests, prints'], [
    { cells: ['ms', fmt(ls.floorMs), fmt(ls.oursMs)], target: target(ls.oursMs / ls.floorMs, '<=', TARGETS.listingRatio, `≤ ${TARGETS.listingRatio}× the floor`) },
  ]);
}

function digest(d, o) {
  const ratio = d.warden.mbps / d.openssl.mbps;
  return table(`Digest of a ${o.digestMb} MiB file (SHA-256), best of ${d.runs} per side, interleaved`, ['measure', 'openssl dgst -sha256', 'mcp-warden digestFileAsync', 'ratio'], [
    { cells: ['MB/s, process start subtracted', fmt(d.openssl.mbps, 0), fmt(d.warden.mbps, 0), `${fmt(ratio, 2)}×`], target: target(ratio, '>=', TARGETS.digestRatio, `≥ ${TARGETS.digestRatio}×`) },
    { cells: ['MB/s, whole process', fmt(d.openssl.wholeMbps, 0), fmt(d.warden.wholeMbps, 0), `${fmt(d.warden.wholeMbps / d.openssl.wholeMbps, 2)}×`] },
    { cells: ['process start, ms (the same command on an empty file)', fmt(d.openssl.startMs), fmt(d.warden.startMs), ''] },
  ], ['Both sides are timed as whole processes from outside (`openssl dgst -sha256 FILE`; `node -e` importing dist/attest/digest.js and digesting FILE); the first row subtracts from each side its own time on an empty file (process start, and for node the import).']);
}

function relist(r, o) {
  const order = ['never', ...Object.keys(r).filter((k) => k !== 'never')];
  return table(`Re-listing cost (relistEvery.calls): echo round trip (ms) through mcp-warden run, server-everything, ${o.relistCalls} calls per session in alternating blocks`, ['relistEvery.calls', 'p50', 'p90', 'p99', 'max', 'p99 − never'], order.map((k) => ({
    cells: [k === 'never' ? 'never (baseline)' : `${k}${k === '200' ? ' (default)' : ''}`, fmt(r[k].p50, 3), fmt(r[k].p90, 3), fmt(r[k].p99, 3), fmt(r[k].max, 1), k === 'never' ? '' : signed(r[k].p99 - r.never.p99, 3)],
  })), ['Informational (no target): the relay measure above runs with the default, every 200 calls.']);
}

export function report(res) {
  const o = res.options;
  const m = res.machine;
  const out = [
    `mcp-warden bench, commit ${res.commit ?? '?'}${res.dirty ? ` (${res.dirty})` : ''}, ${res.date}${o.quick ? ', --quick' : ''}`,
    `machine: ${m.cpus} × ${m.model}, node ${m.node}${m.relayNode && m.relayNode !== process.execPath ? ` (raw relay, warden and servers on ${m.relayNode})` : ''}; load average ${m.loadavgStart.map((x) => x.toFixed(2)).join(' ')} at start, ${m.loadavgEnd?.map((x) => x.toFixed(2)).join(' ')} at end; ${fmt(res.seconds, 0)} s\n`,
  ];
  const parts = { launch, concurrent, relay, bulk, rss, listing, digest, relist };
  for (const [name, render] of Object.entries(parts)) {
    if (res[name]) out.push(render(res[name], o));
    else if (res.errors[name]) out.push(`### ${name}\n\nfailed: ${res.errors[name].split('\n')[0]}\n`);
  }
  out.push(
    '### Not run here',
    '',
    '- the daemon at rest with 20 servers: `node bench/daemon-idle.mjs --seconds 20` (SETTLE_MS=30000 by default; about a minute);',
    '- launch/teardown soak and 100 concurrent sessions: `node bench/soak.mjs [--cycles N] [--concurrent N]`;',
    '- the module guard alone: `node bench/module-guard.mjs`; provenance: `node bench/provenance.mjs`.',
  );
  return out.join('\n');
}
