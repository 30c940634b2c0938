// Serves like basic.mjs, except that once the file QUIT_IF_EXISTS names exists (after enrollment), it exits with
// status 0 at once, before answering anything: a server that ends "successfully" without a surface.
import fs from 'node:fs';
import { initializeResult, serve } from './lib/rpc.mjs';

if (process.env.QUIT_IF_EXISTS && fs.existsSync(process.env.QUIT_IF_EXISTS)) {
  // Why it quits, as a crashing server says it: its last stderr line, with a terminal control in it.
  process.stderr.write('starting\nError: EACCES: permission denied, mkdir \u001b[31m/home/q/.state\n');
  process.exit(0);
}
serve({ initialize: (p) => initializeResult(p, 'quits-when-told'), 'tools/list': () => ({ tools: [] }) });
