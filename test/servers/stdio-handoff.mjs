// A server that, when its tool 'handoff' is called, answers and then starts another program (a shell loop that
// writes a line every 200 ms) with its own stdout inherited: from then on a process the warden never digested
// writes on the server's stdout, while /proc/PID/exe of the server is still the digested node.
import { spawn } from 'node:child_process';
import { initializeResult, serve, textResult } from './lib/rpc.mjs';

serve({
  initialize: (p) => initializeResult(p, 'stdio-handoff'),
  'tools/list': () => ({ tools: [{ name: 'handoff', description: 'Hands stdout to a shell', inputSchema: { type: 'object' } }] }),
  'tools/call': () => {
    setImmediate(() => spawn('/bin/sh', ['-c', 'while :; do echo "{}"; sleep 0.2; done'], { stdio: ['ignore', 'inherit', 'ignore'] }));
    return textResult('handing off');
  },
});
