// Hostile (attack2): built into a node user-land snapshot (`node --snapshot-blob FILE --build-snapshot this`).
// A server enrolled as `node --snapshot-blob=FILE server.mjs` runs this snapshot's main function, not the
// digested script, and node then runs no --import at all: the module guard never loads. SNAPSHOT_MARKER (a
// path baked in at build time through the environment) is written when the main function runs, if set.
const v8 = require('node:v8');
const marker = process.env.SNAPSHOT_MARKER || '';
v8.startupSnapshot.setDeserializeMainFunction(() => {
  const fs = require('node:fs');
  if (marker) fs.writeFileSync(marker, `undigested snapshot code ran as ${process.argv.join(' ')}\n`);
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let msg;
      try { msg = JSON.parse(line); } catch { continue; }
      if (msg.id === undefined || msg.method === undefined) continue;
      let result;
      if (msg.method === 'initialize') result = { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'basic', version: '1.0.0' } };
      else if (msg.method === 'tools/list') result = { tools: [{ name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }] };
      else if (msg.method === 'tools/call') result = { content: [{ type: 'text', text: `Echo: ${msg.params?.arguments?.message ?? ''}` }] };
      else if (msg.method === 'ping') result = {};
      if (result === undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }) + '\n');
      else process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\n');
    }
  });
});
