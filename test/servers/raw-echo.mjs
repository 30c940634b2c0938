// A real MCP server for initialize and tools/list; for every other request it records the line it received,
// byte for byte, to RECORD_FILE and answers with a crafted line: keys in unusual order, a number beyond 2^53,
// and the request's id copied as its raw lexeme.
import fs from 'node:fs';

const record = process.env.RECORD_FILE;
let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let nl;
  while ((nl = pending.indexOf(0x0a)) >= 0) {
    const line = pending.subarray(0, nl + 1);
    pending = pending.subarray(nl + 1);
    const text = line.toString('utf8');
    const id = /"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")/.exec(text);
    const method = /"method"\s*:\s*"([^"]*)"/.exec(text)?.[1];
    if (method === 'initialize') {
      process.stdout.write(`{"jsonrpc":"2.0","id":${id[1]},"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw-echo","version":"1"}}}\n`);
      continue;
    }
    if (method === 'tools/list') {
      process.stdout.write(`{"jsonrpc":"2.0","id":${id[1]},"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}\n`);
      continue;
    }
    if (method === 'notifications/initialized') continue;
    fs.appendFileSync(record, line);
    if (!id || !method) continue;
    // A ping's result is empty by the protocol (the warden relays no member in it): unusual order and line end only.
    if (method === 'ping') process.stdout.write(`{"result":{},"id":${id[1]},"jsonrpc":"2.0"}\r\n`);
    else process.stdout.write(`{"result":{"zeta":1,"alpha":[9007199254740993,1.0e2,-0.0],"\\u00e9":"\\ud83d\\ude00"},"id":${id[1]},"jsonrpc":"2.0"}\r\n`);
  }
});
process.stdin.on('end', () => process.exit(0));
