import { refuseIfPreloaded } from '../attest/self.js';
import { WardenError } from '../error.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { openHome } from '../store/home.js';
import { loadAllowlist } from '../store/allowlist.js';
import { loadLocks } from '../store/locks.js';
import { resolveHome } from '../store/paths.js';
import { SERVER_ID_RE, loadServers } from '../store/servers.js';
import { envOptions } from './env-options.js';
import { acceptedFindings } from './accept-findings.js';
import type { LockEntry } from '../surface/lockfile.js';
import { lockAndBaseline, planEnrollment, trustAndAdd, type EnrollSpec } from '../enroll/enrollment.js';
import { confirm, describeArtifact, escaped, line } from './output.js';
import { offerStrictMode } from './rules-offer.js';
import { command as commandLineOf } from './rules-print.js';
import { printProposal } from './sandbox-proposal.js';

export interface AddOptions {
  env: string[];
  passEnv?: string[];
  cwd?: string;
  posture?: 'enforce' | 'monitor';
  acceptFindings?: string;
  yes?: boolean;
}

/** `mcp-warden add`: resolve and digest the command, allowlist what it runs, write the server entry. */
export async function addVerb(homeFlag: string | undefined, id: string, commandLine: string[], opts: AddOptions): Promise<number> {
  if (!SERVER_ID_RE.test(id)) throw new WardenError('USAGE', `'${id}' is not a valid server id: use letters, digits, ".", "_" or "-" (at most 64).`);
  const [command, ...args] = commandLine;
  if (!command) throw new WardenError('USAGE', `no command given for server '${id}'. Usage: mcp-warden add ${id} -- <command> [args...]`);
  refuseIfPreloaded(); // before anything is written: add launches the server to lock it
  const { env, passEnv } = envOptions(opts.env, opts.passEnv);
  const accept = acceptedFindings(opts.acceptFindings);
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  const config = loadServers(paths);
  // Every trust file is read before anything is written: a corrupt one refuses the add, rather than leaving
  // a server in servers.json and the allowlist whose lock could not be written.
  loadAllowlist(paths);
  loadLocks(paths);
  if (Object.hasOwn(config.servers, id)) {
    throw new WardenError('SERVER_EXISTS', `server '${id}' is already in ${paths.servers}. Choose another id, or edit that entry by hand.`);
  }
  const spec: EnrollSpec = { command, args, env, passEnv, posture: opts.posture ?? 'enforce', ...(opts.cwd ? { cwd: opts.cwd } : {}) };
  const cache = loadDigestCache(paths, id);
  const plan = await planEnrollment(paths, id, spec, cache);
  saveDigestCache(paths, id, cache);

  line(escaped(`Server '${id}' runs ${plan.file} ${plan.args.join(' ')}`));
  line('It depends on these artifacts, which will be allowlisted:');
  for (const a of plan.artifacts) line(describeArtifact(a));
  const interactive = process.stdin.isTTY === true && !opts.yes;
  if (interactive && !(await confirm('Trust them and add the server? [y/N] '))) {
    line('Nothing was changed.');
    return 1;
  }

  await trustAndAdd(paths, id, spec, plan, `add ${id}`, (m) => line(escaped(m)));
  line(escaped(`Added server '${id}' to ${paths.servers}.`));
  line('Launching it once to lock its tool surface...');
  const enrolled = await lockAndBaseline(paths, id, (m) => line(escaped(m)), `add ${id}`, accept, undefined, undefined, 'operator');
  if (enrolled.modules?.length) {
    line(`It loaded ${enrolled.modules.length} module(s) from outside its package, now allowlisted and recorded as its "modules":`);
    for (const m of enrolled.modules) line(describeArtifact(m));
  }
  if (enrolled.lockError) {
    line(`The server was added, but its surface could not be locked: ${escaped(enrolled.lockError.message)}`);
    line(escaped(`Fix that, then run: mcp-warden${homeFlag ? ` --home ${paths.home}` : ''} lock ${id}`));
    return enrolled.lockError.exitCode;
  }
  const locked = enrolled.lock as LockEntry;
  const conditional = loadLocks(paths).warden.get(id)?.conditional.length ?? 0;
  line(`Locked ${locked.tools.length} tools (${conditional > 0 ? `${conditional} of them listed only to a client offering roots, sampling or elicitation; ` : ''}revision ${escaped(locked.protocol.era)}, surface ${locked.surface_hash}) in ${paths.toolsLock}.`);
  line(`Recorded ${enrolled.baselines ?? 0} canary baseline(s) in ${paths.wardenLock}.`);
  line(escaped(`Point your client at: mcp-warden${homeFlag ? ` --home ${paths.home}` : ''} run ${id}`));
  await offerStrictMode(paths, homeFlag, id, interactive);
  if (enrolled.proposal) printProposal(enrolled.proposal.proposal, enrolled.proposal.file, (rest) => commandLineOf(homeFlag, paths.home, rest));
  return 0;
}
