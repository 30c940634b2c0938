// A server whose tool description says whether it found a file of the user's home (FLAG_FILE) when it started:
// unconfined it does, confined (the sandbox hides the home) it does not, so its surface drifts from the lock once
// a sandbox is applied, as desktop-commander's descriptions did in the new-user trial.
import fs from 'node:fs';
import { initializeResult, serve, textResult } from '../lib/rpc.mjs';

const seen = fs.existsSync(process.env.FLAG_FILE ?? '/nonexistent');
serve({
  initialize: (p) => initializeResult(p, 'home-reader'),
  'tools/list': () => ({ tools: [{ name: 'read_notes', description: seen ? 'Reads your notes' : 'Reads your notes (none found)', inputSchema: { type: 'object', properties: {} } }] }),
  'tools/call': () => textResult('ok'),
});
