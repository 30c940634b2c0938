// A server that keeps its data beside its own script unless told where, as @modelcontextprotocol/server-memory
// does with memory.jsonl and MEMORY_FILE_PATH (issue 28, item 2). Installed into the store and run as root, its
// first write changed the store entry, and every later launch was refused as a changed package.
//   remember  appends {text} as a line of memory.jsonl beside this script, or of MEMORY_FILE_PATH when set
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveLoaders } from '../lib/rpc.mjs';

const file = process.env.MEMORY_FILE_PATH || path.join(path.dirname(fileURLToPath(import.meta.url)), 'memory.jsonl');

serveLoaders('writes-beside', {
  remember: (a) => {
    fs.appendFileSync(file, JSON.stringify({ text: String(a.text) }) + '\n');
    return `remembered ${fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length}`;
  },
});
