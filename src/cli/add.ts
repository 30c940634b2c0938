import { createInterface } from 'node:readline/promises';
import { planLaunch, type Artifact } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { loadAllowlist, saveAllowlist, upsertEntry } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { SERVER_ID_RE, loadServers, newServerConfig, saveServers } from '../store/servers.js';
import { recordCanaries } from './canary.js';
import { captureLock } from './lock.js';
import { line } from './output.js';

export interface AddOptions {
  env: string[];
  cwd?: string;
  posture?: 'enforce' | 'monitor';
  yes?: boolean;
}

/** Splits --env NAME=VALUE (a value set for the server) from --env NAME (passed through from the warden). */
function envOptions(specs: string[]): { env: Record<string, string>; passEnv: string[] } {
  const env: Record<string, string> = {};
  const passEnv: string[] = [];
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    const name = eq < 0 ? spec : spec.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new WardenError('USAGE', `--env ${spec}: '${name}' is not an environment variable name.`);
    if (eq < 0) passEnv.push(name);
    else env[name] = spec.slice(eq + 1);
  }
  return { env, passEnv };
}

function describeArtifact(a: Artifact): string {
  const extra = a.kind === 'package' ? ` (${a.packages} packages, ${a.files} files)` : '';
  const via = a.chain.length > 1 ? `\n      via ${a.chain.join(' -> ')}` : '';
  return `  ${a.kind.padEnd(10)} ${a.path}${extra}\n      sha256 ${a.sha256}${via}`;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** `mcp-warden add`: resolve and digest the command, allowlist what it runs, write the server entry. */
export async function addVerb(homeFlag: string | undefined, id: string, commandLine: string[], opts: AddOptions): Promise<number> {
  if (!SERVER_ID_RE.test(id)) throw new WardenError('USAGE', `'${id}' is not a valid server id: use letters, digits, ".", "_" or "-" (at most 64).`);
  const [command, ...args] = commandLine;
  if (!command) throw new WardenError('USAGE', `no command given for server '${id}'. Usage: mcp-warden add ${id} -- <command> [args...]`);
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  const config = loadServers(paths);
  if (Object.hasOwn(config.servers, id)) {
    throw new WardenError('SERVER_EXISTS', `server '${id}' is already in ${paths.servers}. Choose another id, or edit that entry by hand.`);
  }
  const { env, passEnv } = envOptions(opts.env);
  const cache = loadDigestCache(paths);
  const plan = await planLaunch({ serverId: id, command, args, cwd: opts.cwd, trustedPath: config.path }, cache);
  saveDigestCache(paths, cache);

  line(`Server '${id}' runs ${plan.file} ${plan.args.join(' ')}`);
  line('It depends on these artifacts, which will be allowlisted:');
  for (const a of plan.artifacts) line(describeArtifact(a));
  const interactive = process.stdin.isTTY === true && !opts.yes;
  if (interactive && !(await confirm('Trust them and add the server? [y/N] '))) {
    line('Nothing was changed.');
    return 1;
  }

  const allowlist = loadAllowlist(paths);
  const now = new Date().toISOString();
  for (const a of plan.artifacts) {
    const change = upsertEntry(allowlist, { path: a.path, kind: a.kind, sha256: a.sha256, addedAt: now, note: `added by 'mcp-warden add ${id}'` });
    if (change.action === 'unchanged') continue;
    const previousSha256 = change.action === 'replace' ? change.previous.sha256 : undefined;
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: change.action, path: a.path, kind: a.kind, sha256: a.sha256, ...(previousSha256 ? { previousSha256 } : {}), by: `add ${id}` });
    if (previousSha256) line(`Replaced the allowlisted digest of ${a.path}: was ${previousSha256}`);
  }
  saveAllowlist(paths, allowlist);
  const entry = newServerConfig({ command, args, env, passEnv, posture: opts.posture ?? 'enforce', ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  config.servers[id] = entry;
  saveServers(paths, config);
  line(`Added server '${id}' to ${paths.servers}.`);
  line('Launching it once to lock its tool surface...');
  try {
    const locked = await captureLock(paths, id, 'lock');
    line(`Locked ${locked.tools.length} tools (revision ${locked.protocol.era}, surface ${locked.surface_hash}) in ${paths.toolsLock}.`);
    const baselines = await recordCanaries(paths, id);
    line(`Recorded ${Object.keys(baselines).length} canary baseline(s) in ${paths.wardenLock}.`);
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    line(`The server was added, but its surface could not be locked: ${err.message}`);
    line(`Fix that, then run: mcp-warden${homeFlag ? ` --home ${paths.home}` : ''} lock ${id}`);
    return err.exitCode;
  }
  line(`Point your client at: mcp-warden${homeFlag ? ` --home ${paths.home}` : ''} run ${id}`);
  return 0;
}
