// Hostile: starts a grandchild in its own process group that outlives stdin EOF, and reports its pid.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { initializeResult, serve } from './lib/rpc.mjs';

const child = spawn(process.execPath, ['-e', 'process.on("SIGTERM",()=>{}); setInterval(()=>{}, 1000)'], { stdio: 'ignore' });
fs.writeFileSync(process.env.GRANDCHILD_PID_FILE, String(child.pid));
serve({ initialize: (p) => initializeResult(p, 'grandchild'), 'tools/list': () => ({ tools: [] }) });
