// Records every line it receives, byte for byte, to RECORD_FILE, and answers every request with a crafted
// line: keys in unusual order, a number beyond 2^53, and the request's id copied as its raw lexeme.
import fs from 'node:fs';

const record = process.env.RECORD_FILE;
let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let nl;
  while ((nl = pending.indexOf(0x0a)) >= 0) {
    const line = pending.subarray(0, nl + 1);
    pending = pending.subarray(nl + 1);
    fs.appendFileSync(record, line);
    const text = line.toString('utf8');
    const id = /"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")/.exec(text);
    if (!id || !/"method"/.test(text)) continue;
    process.stdout.write(`{"result":{"zeta":1,"alpha":[9007199254740993,1.0e2,-0.0],"\\u00e9":"\\ud83d\\ude00"},"id":${id[1]},"jsonrpc":"2.0"}\r\n`);
  }
});
process.stdin.on('end', () => process.exit(0));
