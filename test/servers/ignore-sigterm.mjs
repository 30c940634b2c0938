// Hostile: ignores SIGTERM and stays alive after stdin closes; only SIGKILL stops it.
// With ARMED_BY=FILE in its environment it does so only once FILE exists, and ends at stdin EOF before: a test
// enrolls it unarmed (each of `add`'s launches then ends at once, not after the warden's SIGTERM wait), then arms it.
import fs from 'node:fs';
import { initializeResult, serve } from './lib/rpc.mjs';

const armed = !process.env.ARMED_BY || fs.existsSync(process.env.ARMED_BY);
if (armed) {
  process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\n'));
  setInterval(() => {}, 1000);
}
serve({ initialize: (p) => initializeResult(p, 'ignore-sigterm'), 'tools/list': () => ({ tools: [] }) }, { keepAliveAfterStdin: armed });
