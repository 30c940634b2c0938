import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';
import { matchAllowlist } from '../attest/match.js';
import { planLaunch } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { allowlistFileSchema, updateAllowlist, upsertEntry } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { loadJsonFile } from '../store/json-file.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadLocks } from '../store/locks.js';
import { loadServers, newServerConfig, updateServers } from '../store/servers.js';
import { captureLock } from '../supervise/capture-lock.js';

// `npm start`: the embedded default. Supervises the reference server-everything (a dev dependency) through
// `mcp-warden run`, with no hand edits. The checkout's allowlist.json pins the server's script and package
// tree (paths relative to the checkout); the node interpreter differs per machine, so it is enrolled on first
// use, loudly, and recorded as trust-on-first-use. Then a short scripted client session shows it working, and
// the daemon runs in the foreground on the same home, printing where its metrics and status are.

const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER_ID = 'everything';
const SCRIPT = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';

const say = (s = ''): void => void process.stdout.write(s + '\n');

/** The checkout's allowlist.json: the allowlist format, with paths relative to the checkout. */
function checkoutAllowlist(): v.InferOutput<typeof allowlistFileSchema>['entries'] {
  const schema = v.strictObject({ ...allowlistFileSchema.entries, entries: v.array(v.strictObject({ ...allowlistFileSchema.entries.entries.item.entries, path: v.string() })) });
  const file = loadJsonFile(path.join(CHECKOUT, 'allowlist.json'), 'the checkout allowlist.json', schema, false);
  return (file?.entries ?? []).map((e) => ({ ...e, path: path.resolve(CHECKOUT, e.path) }));
}

async function ensureEnrolled(paths: HomePaths): Promise<void> {
  const wrote = await updateServers(paths, (config) => {
    if (Object.hasOwn(config.servers, SERVER_ID)) return false;
    config.servers[SERVER_ID] = newServerConfig({ command: process.execPath, args: [path.join(CHECKOUT, SCRIPT), 'stdio'] });
    return true;
  });
  if (wrote) say(`Wrote server '${SERVER_ID}' to ${paths.servers}`);
  const pinnedByCheckout = checkoutAllowlist();
  await updateAllowlist(paths, (allowlist) => {
    for (const pinned of pinnedByCheckout) {
      if (upsertEntry(allowlist, pinned).action !== 'unchanged') say(`Pinned by the checkout: ${pinned.kind} ${pinned.path}\n  sha256 ${pinned.sha256}`);
    }
  });
  const config = loadServers(paths);
  const server = Object.hasOwn(config.servers, SERVER_ID) ? config.servers[SERVER_ID] : undefined;
  if (!server) throw new WardenError('SERVER_UNKNOWN', `server '${SERVER_ID}' vanished from ${paths.servers}`);
  const cache = loadDigestCache(paths);
  const plan = await planLaunch({ serverId: SERVER_ID, command: server.command, args: server.args, cwd: server.cwd, trustedPath: config.path, modules: server.modules }, cache);
  saveDigestCache(paths, cache);
  const interpreter = fs.realpathSync(process.execPath);
  const enrolled = await updateAllowlist(paths, (allowlist) => {
    const out = [];
    for (const verdict of matchAllowlist(plan.artifacts, allowlist.entries).verdicts) {
      const a = verdict.artifact;
      if (verdict.state !== 'not_allowlisted' || a.kind !== 'executable' || a.path !== interpreter) continue;
      upsertEntry(allowlist, { path: a.path, kind: a.kind, sha256: a.sha256, addedAt: new Date().toISOString(), note: 'the node interpreter of this machine, enrolled by npm start', trustOnFirstUse: true });
      out.push(a);
    }
    return out;
  });
  for (const a of enrolled) {
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: 'add', path: a.path, kind: a.kind, sha256: a.sha256, trustOnFirstUse: true, by: 'npm start' });
    say('');
    say('TRUST ON FIRST USE: this machine\'s node interpreter was not allowlisted. Enrolling it as it is now:');
    say(`  executable ${a.path}\n  sha256     ${a.sha256}`);
    say('  Recorded in the allowlist (trustOnFirstUse: true) and the audit log. Compare the digest with your');
    say('  distribution\'s package (e.g. dpkg -V nodejs) if this machine may already be compromised.');
    say('');
  }
  if (!loadLocks(paths).tools.has(SERVER_ID)) {
    const entry = await captureLock(paths, SERVER_ID, 'lock');
    say(`LOCKED ON FIRST USE: the tool surface of '${SERVER_ID}' as served now: ${entry.tools.length} tools, surface ${entry.surface_hash}`);
    say(`  in ${paths.toolsLock}; every later session is verified against it in-band.`);
    say('');
  }
}

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
      if (msg.error) say(`Error from the warden: ${msg.error.message}`);
      else if (msg.id === 1) say(`Connected to ${JSON.stringify((msg.result?.serverInfo as { name?: string })?.name)} through mcp-warden.`);
      else if (msg.id === 2) say(`Tools: ${(msg.result?.tools as { name: string }[]).map((t) => t.name).join(', ')}`);
      else if (msg.id === 3) say(`echo answered: ${JSON.stringify(msg.result?.content)}`);
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
  await ensureEnrolled(paths);
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
    process.stderr.write(err instanceof WardenError ? `mcp-warden: ${err.code}: ${err.message}\n` : `mcp-warden: ${String(err)}\n`);
    process.exitCode = err instanceof WardenError ? err.exitCode : 70;
  },
);
