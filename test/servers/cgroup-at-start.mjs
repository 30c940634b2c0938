// Writes the cgroup it runs in (the "0::" line of /proc/self/cgroup) to FILE before it serves, as the first
// thing its own code does: a server behind the module guard's gate must already be in its session's cgroup then.
// Usage: cgroup-at-start.mjs FILE
import fs from 'node:fs';
import { initializeResult, serve } from './lib/rpc.mjs';

const own = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
fs.writeFileSync(process.argv[2], `${own?.slice(3) ?? ''}\n`);
serve({ initialize: (p) => initializeResult(p, 'cgroup-at-start'), 'tools/list': () => ({ tools: [] }) });
