// A second baseline for the relay benchmarks: like bench/raw-relay.mjs, but it holds each line of the server's
// stdout until the line is complete and writes it then (one Buffer.concat per line, no parsing). A relay that
// must judge a whole line before releasing any of it cannot do less; its gap to the raw relay, which streams
// a line's chunks as they come, is what store-and-forward costs by itself.
import { spawn } from 'node:child_process';

const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
let parts = [];
child.stdout.on('data', (chunk) => {
  let from = 0;
  for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
    const piece = chunk.subarray(from, nl + 1);
    process.stdout.write(parts.length ? Buffer.concat([...parts, piece]) : piece);
    parts = [];
    from = nl + 1;
  }
  if (from < chunk.length) parts.push(chunk.subarray(from));
});
child.on('exit', (code) => process.exit(code ?? 0));
