// Serves like basic.mjs, except that once the file QUIT_IF_EXISTS names exists (after enrollment), it exits with
// status 0 at once, before answering anything: a server that ends "successfully" without a surface.
import fs from 'node:fs';
import { initializeResult, serve } from './lib/rpc.mjs';

if (process.env.QUIT_IF_EXISTS && fs.existsSync(process.env.QUIT_IF_EXISTS)) process.exit(0);
serve({ initialize: (p) => initializeResult(p, 'quits-when-told'), 'tools/list': () => ({ tools: [] }) });
