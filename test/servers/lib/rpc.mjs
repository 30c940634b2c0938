// A minimal newline-delimited JSON-RPC server loop for fixtures. Handlers get (params, message) and return a
// result; `raw` handlers return the exact line to write. Unknown methods get -32601.

import fs from 'node:fs';

/** The scenario a hostile fixture is told to play: the JSON of the file SCENARIO_FILE names, read again on each
 *  call (so a test changes it between requests), or {} when there is none. */
export function scenario() {
  const f = process.env.SCENARIO_FILE;
  const text = f && fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
  return text ? JSON.parse(text) : {};
}

/** Writes one line as it is (a forged or hand-built answer, whose bytes a test depends on). */
export function writeLine(text) {
  process.stdout.write(text + '\n');
}

export function write(obj) {
  writeLine(JSON.stringify(obj));
}

export function initializeResult(params, name = 'fixture') {
  return {
    protocolVersion: params?.protocolVersion ?? '2025-06-18',
    capabilities: { tools: {} },
    serverInfo: { name, version: '1.0.0' },
  };
}

export function textResult(text) {
  return { content: [{ type: 'text', text }] };
}

/** Appends a line received to the file LOG_FILE names, when it names one (an `onLine` for `messages`/`requests`). */
export function logLine(line) {
  if (process.env.LOG_FILE) fs.appendFileSync(process.env.LOG_FILE, line + '\n');
}

/** Calls `onMessage(msg)` for every JSON value read from stdin, one a line, in order: requests, notifications,
 *  answers and batches alike (a line that is not JSON, or is `null`, is passed over). `options.onLine` sees every
 *  line first. Exits at the end of stdin unless `options.keepAliveAfterStdin`. */
export function messages(onMessage, options = {}) {
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      options.onLine?.(line);
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (msg !== null) onMessage(msg);
    }
  });
  if (!options.keepAliveAfterStdin) process.stdin.on('end', () => process.exit(0));
}

/** Calls `onRequest(msg)` for every request read from stdin (a JSON line with a method and an id), in order;
 *  `options` as for `messages`. */
export function requests(onRequest, options = {}) {
  messages((msg) => {
    if (msg.method !== undefined && msg.id !== undefined) onRequest(msg);
  }, options);
}

export function serve(handlers, options = {}) {
  requests((msg) => {
    const handler = handlers[msg.method] ?? (msg.method === 'initialize' ? (p) => initializeResult(p) : undefined);
    if (!handler) {
      write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
      return;
    }
    Promise.resolve(handler(msg.params, msg)).then((result) => write({ jsonrpc: '2.0', id: msg.id, result }));
  }, options);
}

/**
 * Serves one tool per loader (the red-team servers): tools/call runs `loaders[name](arguments)` and answers
 * "loaded: RESULT"; an unknown tool, or (with `catchErrors`) a loader that throws, is answered as an error.
 */
export function serveLoaders(name, loaders, { description = (tool) => `Loads a module by ${tool}`, catchErrors = true } = {}) {
  const tools = Object.keys(loaders).map((tool) => ({ name: tool, description: description(tool), inputSchema: { type: 'object' } }));
  serve({
    initialize: (p) => initializeResult(p, name),
    'tools/list': () => ({ tools }),
    'tools/call': async (p) => {
      if (!Object.hasOwn(loaders, p.name)) return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${p.name}` }] };
      if (!catchErrors) return textResult(`loaded: ${await loaders[p.name](p.arguments ?? {})}`);
      try {
        return textResult(`loaded: ${await loaders[p.name](p.arguments ?? {})}`);
      } catch (e) {
        return { isError: true, content: [{ type: 'text', text: `failed: ${e.message}` }] };
      }
    },
  });
}
