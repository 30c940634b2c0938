// Baseline for the relay benchmark: a node process that spawns the server and pipes bytes both ways with no
// framing, parsing or verification. The difference between this and `mcp-warden run` is the warden's own cost.
import { spawn } from 'node:child_process';

const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code) => process.exit(code ?? 0));
