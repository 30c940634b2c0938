// What a 2026-07-28 session costs through the warden (issue 27 item 7), beside a 2025 one and beside the same
// sessions without the warden: the real SDK v2 client (@modelcontextprotocol/client 2.4.0) against a real SDK v2
// server (test/servers/sdk2/serve-stdio.mjs, serveStdio: both eras), from connect() to its first tools/list
// answer. In `auto` mode the SDK probes server/discover on a sibling launch first (two launches a session); in
// `pin` it speaks 2026-07-28 on one launch; `legacy` is a 2025 session. Sides: direct (the client spawns the
// server), raw relay (bench/raw-relay.mjs: the cost of any node process in the path), mcp-warden run. Rounds
// interleave the sides and modes; medians and p25 over the rounds after warm-up.
//   node bench/modern-session.mjs [--rounds N] [--warmup N]
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { add, benchDir, ROOT, RAW_RELAY, WARDEN } from './lib/setup.mjs';
import { fmt, quantile, signed } from './lib/stats.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const ROUNDS = arg('rounds', 15);
const WARMUP = arg('warmup', 2);
const SERVER = path.join(ROOT, 'test/servers/sdk2/serve-stdio.mjs');
const NODE = process.execPath;

const { dir } = benchDir();
const home = path.join(dir, 'home');
add(WARDEN, home, 'sdk2', [SERVER]);
const sides = {
  direct: [NODE, [SERVER]],
  raw: [NODE, [RAW_RELAY, NODE, SERVER]],
  warden: [NODE, [WARDEN, '--home', home, 'run', 'sdk2']],
};
const MODES = { legacy: undefined, pin: { mode: { pin: '2026-07-28' } }, auto: { mode: 'auto' } };

async function once([command, args], negotiation) {
  const t0 = process.hrtime.bigint();
  const client = new Client({ name: 'bench-client', version: '1.0.0' }, negotiation ? { versionNegotiation: negotiation } : {});
  await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: 'ignore' }));
  const { tools } = await client.listTools();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await client.close();
  if (tools.length === 0) throw new Error('no tools listed');
  return ms;
}

const ms = {};
for (let i = 0; i < WARMUP + ROUNDS; i++) {
  for (const [mode, negotiation] of Object.entries(MODES)) {
    for (const [side, cmd] of Object.entries(sides)) {
      const t = await once(cmd, negotiation);
      if (i >= WARMUP) (ms[`${mode} ${side}`] ??= []).push(t);
    }
  }
}
console.log(`node ${process.version}: connect() → first tools/list answer (ms), SDK v2 client and server, ${ROUNDS} rounds after ${WARMUP} warm-up`);
console.log('| mode | direct p50 | raw relay p50 | warden p50 | warden p25 | warden − raw (p50) |');
console.log('|---|---|---|---|---|---|');
for (const mode of Object.keys(MODES)) {
  const p = (side) => quantile(ms[`${mode} ${side}`], 0.5);
  console.log(`| ${mode} | ${fmt(p('direct'))} | ${fmt(p('raw'))} | ${fmt(p('warden'))} | ${fmt(quantile(ms[`${mode} warden`], 0.25))} | ${signed(p("warden") - p("raw"))} |`);
}
