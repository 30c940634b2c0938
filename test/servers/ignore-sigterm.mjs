// Hostile: ignores SIGTERM and stays alive after stdin closes; only SIGKILL stops it.
import { initializeResult, serve } from './lib/rpc.mjs';

process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\n'));
setInterval(() => {}, 1000);
serve({ initialize: (p) => initializeResult(p, 'ignore-sigterm'), 'tools/list': () => ({ tools: [] }) }, { keepAliveAfterStdin: true });
