import v8 from 'node:v8';
import { runStarting } from '../supervise/run-start.js';

// `mcp-warden run <id>`: what a client launches in place of the server. It takes no options and prints nothing
// to stdout itself: stdout is the JSON-RPC stream, and every refusal is answered there (supervise/run-session.ts).

export function runVerb(homeFlag: string | undefined, id: string): Promise<number> {
  // A relay lives long and allocates little at a time, but the launch's digest walk makes V8 grow its young
  // generation to 16 MB semi-spaces, which it then keeps for the whole session: ~10 MB of RSS for nothing
  // (docs/adr/0019-fast-launch.md). Keeping 1 MB instead: round trips p50 +0.02 ms, p99 no worse (one bench run).
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  return runStarting(homeFlag, id);
}
