import { spawn } from 'node:child_process';
import path from 'node:path';
import { CHECKOUT, SERVER_ID, ensureEnrolled } from '../enroll/embedded-default.js';
import { WardenError } from '../error.js';
import { openHome } from '../store/home.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { escaped } from '../escape.js';

// `npm start`: the embedded default. Supervises the reference server-everything (a dev dependency) through
// `mcp-warden run`, with no hand edits. The checkout's allowlist.json pins the server's script and package
// tree (paths relative to the checkout); the node interpreter differs per machine, so it is enrolled on first
// use, loudly, and recorded as trust-on-first-use. Then a short scripted client session shows it working, and
// the daemon runs in the foreground on the same home, printing where its metrics and status are. The
// enrollment is enroll/embedded-default.ts.

const say = (s = ''): void => void process.stdout.write(s + '\n');

/** A scripted MCP client session through `mcp-warden run`: initialize, list tools, call echo. */
function demoSession(paths: HomePaths): Promise<number> {
  const warden = path.join(CHECKOUT, 'dist/cli/main.js');
  const child = spawn(process.execPath, [warden, '--home', paths.home, 'run', SERVER_ID], { stdio: ['pipe', 'pipe', 'inherit'] });
  const requests = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'npm-start', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hello through mcp-warden' } } },
  ];
  let buf = '';
  let next = 0;
  const send = (): void => {
    while (next < requests.length) {
      const r = requests[next++] as { id?: number };
      child.stdin.write(JSON.stringify(r) + '\n');
      if (r.id !== undefined) return;
    }
    child.stdin.end();
  };
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
      buf = buf.slice(nl + 1);
      if (msg.error) say(`Error from the warden: ${escaped(msg.error.message)}`);
      else if (msg.id === 1) say(`Connected to ${escaped(JSON.stringify((msg.result?.serverInfo as { name?: string })?.name) ?? '')} through mcp-warden.`);
      else if (msg.id === 2) say(`Tools: ${(msg.result?.tools as { name: string }[]).map((t) => escaped(t.name)).join(', ')}`);
      else if (msg.id === 3) say(`echo answered: ${escaped(JSON.stringify(msg.result?.content) ?? '')}`);
      if (msg.id !== undefined) send();
    }
  });
  send();
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 3)));
}

async function main(): Promise<number> {
  const paths = resolveHome(process.env.MCP_WARDEN_HOME ? undefined : path.join(CHECKOUT, '.warden'));
  openHome(paths, true);
  say(`mcp-warden home: ${paths.home}`);
  await ensureEnrolled(paths, say);
  say(`Launching '${SERVER_ID}' through: mcp-warden --home ${paths.home} run ${SERVER_ID}`);
  const code = await demoSession(paths);
  if (code !== 0) {
    say(`The session failed (exit ${code}); see above.`);
    return code;
  }
  say(`Session closed. Audit log: ${paths.audit} (check it with: mcp-warden --home ${paths.home} audit verify)`);
  say('Starting the daemon on this home (Ctrl-C stops it):');
  return runDaemon(paths);
}

/** Runs `mcp-warden daemon` on the embedded default in the foreground, passing signals on. */
function runDaemon(paths: HomePaths): Promise<number> {
  const listen = process.env.MCP_WARDEN_LISTEN ?? '127.0.0.1:9464';
  const child = spawn(process.execPath, [path.join(CHECKOUT, 'dist/cli/main.js'), '--home', paths.home, 'daemon', '--listen', listen], { stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
  return new Promise((resolve) => child.once('exit', (c) => resolve(c ?? 0)));
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(err instanceof WardenError ? `mcp-warden: ${err.code}: ${escaped(err.message)}\n` : `mcp-warden: ${escaped(String(err))}\n`);
    process.exitCode = err instanceof WardenError ? err.exitCode : 70;
  },
);
