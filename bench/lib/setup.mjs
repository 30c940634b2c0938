// A temporary bench directory: private copies of the fixture servers and a home with them enrolled through the
// CLI (`mcp-warden add ID --yes -- node FILE`), removed at exit (bench/lib/procs.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './procs.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WARDEN = path.join(ROOT, 'dist/cli/main.js');
export const RAW_RELAY = path.join(ROOT, 'bench/raw-relay.mjs');
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** The node the servers run on (--server-node): on every side alike; the relays and the warden run on this one. */
let SERVER_NODE = process.execPath;
export function useServerNode(node) {
  SERVER_NODE = path.resolve(node);
}
/** The node the raw relay and the warden run on (--node sets it and the servers' alike). */
export let RELAY_NODE = process.execPath;
export function useNode(node) {
  RELAY_NODE = path.resolve(node);
  SERVER_NODE = RELAY_NODE;
}
/** `--node PATH` (the warden, the raw relay and the servers on that node) and `--server-node PATH` (the servers
 *  only), read from argv: a bench calls this before it enrolls anything. */
export function nodeOptions(argv = process.argv) {
  const value = (name) => {
    const i = argv.indexOf(`--${name}`);
    return i > 0 ? argv[i + 1] : undefined;
  };
  if (value('node')) useNode(value('node'));
  if (value('server-node')) useServerNode(value('server-node'));
}

/**
 * Makes the bench directory: `servers/` (a copy of test/servers: the one-file basic.mjs) and `bulk/` (a copy
 * of bench/servers: bulk.mjs), so that edits in the repository during the run cannot make a server drift.
 */
export function benchDir(prefix = 'warden-bench-') {
  const dir = tempDir(prefix);
  fs.cpSync(path.join(ROOT, 'test/servers'), path.join(dir, 'servers'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'bench/servers'), path.join(dir, 'bulk'), { recursive: true });
  const servers = {
    basic: [path.join(dir, 'servers/basic.mjs')],
    everything: [EVERYTHING, 'stdio'],
    bulk: [path.join(dir, 'bulk/bulk.mjs')],
  };
  return { dir, servers };
}

/** `mcp-warden add id --yes -- node ...argv` into `home` with the warden build `warden`. */
export function add(warden, home, id, argv) {
  const r = spawnSync(RELAY_NODE, [warden, '--home', home, 'add', id, '--yes', '--', SERVER_NODE, ...argv], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`mcp-warden add ${id} failed (${r.status ?? r.signal}): ${r.stderr}${r.stdout}`);
}

/** Rewrites a server's entry in servers.json (a home the bench made). */
export function configure(home, id, change) {
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  change(config.servers[id]);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(config, null, 2), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

/** The command lines of each side for a server: [cmd, args] pairs keyed by side. */
export function sidesFor(argv, id, homes) {
  const sides = {
    direct: [SERVER_NODE, argv],
    raw: [RELAY_NODE, [RAW_RELAY, SERVER_NODE, ...argv]],
  };
  for (const [side, { warden, home }] of Object.entries(homes)) sides[side] = [RELAY_NODE, [warden, '--home', home, 'run', id]];
  return sides;
}

export const LABEL = { direct: 'direct', raw: 'raw relay', warden: 'mcp-warden run', before: '--before build' };
