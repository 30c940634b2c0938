import v8 from 'node:v8';
import { runStarting } from '../supervise/run-start.js';

// `mcp-warden run <id>`: what a client launches in place of the server. It takes no options and prints nothing
// to stdout itself: stdout is the JSON-RPC stream, and every refusal is answered there (supervise/run-session.ts).

export function runVerb(homeFlag: string | undefined, id: string): Promise<number> {
  // A relay lives long and allocates little at a time, but the launch's digest walk makes V8 grow its young
  // generation to 16 MB semi-spaces, which it then keeps for the whole session: ~10 MB of RSS for nothing
  // (docs/adr/0019-fast-launch.md). Keeping 1 MB instead: round trips p50 +0.02 ms, p99 no worse (one bench run).
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  if (maglevTiersUp()) v8.setFlagsFromString('--no-turbofan');
  return runStarting(homeFlag, id);
}

/**
 * Whether hot code reaches V8's Maglev tier without TurboFan: node 24 turns Maglev on by default (22 does not),
 * unless the user set the tiers themselves. There a relay without TurboFan relays as fast, and its process does
 * not page in TurboFan's ~5 MB of machine code nor keep its compile threads' ~5 MB of malloc arenas
 * (docs/adr/0056-launch-on-node-24.md, addendum "TurboFan off in the relay").
 */
function maglevTiersUp(): boolean {
  if (Number(process.versions.node.split('.')[0]) < 24) return false;
  return ![...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => /maglev|turbofan|max-opt|(^|\s)--(no-)?opt\b|jitless/.test(a));
}
