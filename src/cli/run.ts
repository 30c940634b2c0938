import { runSession } from '../supervise/run-session.js';

// `mcp-warden run <id>`: what a client launches in place of the server. It takes no options and prints nothing
// to stdout itself: stdout is the JSON-RPC stream, and every refusal is answered there (supervise/run-session.ts).

export function runVerb(homeFlag: string | undefined, id: string): Promise<number> {
  return runSession(homeFlag, id);
}
