import { WardenError } from '../error.js';
import { escaped, printable } from '../escape.js';
import { changeSandbox, type SandboxChange, type SandboxEdits } from '../sandbox/edit.js';
import { sandboxView, type SandboxView } from '../sandbox/view.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { applyProposal, hasProposal, loadProposal, proposalFile, type SandboxProposal } from '../sandbox/propose.js';
import { networkSeen } from '../sandbox/propose-network.js';
import { recentEvents } from '../audit/tail.js';
import { loadServers } from '../store/servers.js';
import { line, printJson, shortSha } from './output.js';
import { printNetworkSeen, printProposal } from './sandbox-proposal.js';
import { command } from './rules-print.js';
import { checkSurface, type SurfaceCheck } from '../supervise/surface-check.js';
import { describeOutcome, jsonOf } from './verify.js';

// `mcp-warden sandbox <id> [--json]`: shows a server's sandbox; the flags change it (validated, pinned in
// warden.lock, audited). Parses and prints only: sandbox/edit.ts and sandbox/view.ts do the work.

export interface SandboxOptions extends SandboxEdits {
  json?: boolean;
  propose?: boolean;
  pin?: boolean;
  yes?: boolean;
}

function said(id: string, change: SandboxChange): string {
  if (!change.changed) return `The sandbox of server '${id}' is unchanged${change.to ? ' and pinned' : ''}.`;
  return `Changed the sandbox of server '${id}': ${change.to ? `pinned ${shortSha(change.to)}… in warden.lock` : 'it has none now; the pin was removed from warden.lock'} (was ${change.from ? `${shortSha(change.from)}…` : 'none'}).`;
}

function printView(v: SandboxView, cmd: (rest: string) => string, proposed: boolean): void {
  const s = v.sandbox;
  if (s === undefined) {
    line(escaped(`Server '${v.server}' has no sandbox: it runs with every file and address of the user running the warden. Confine it with: ${cmd(`sandbox ${v.server} --network none`)}`));
    if (proposed) line(escaped(`  A sandbox was proposed from what its enrollment launches did: ${cmd(`sandbox ${v.server} --propose`)}`));
  }
  else if (s === 'unconfined') line(escaped(`Server '${v.server}' runs unconfined, by the operator's explicit choice (audited).`));
  else {
    line(escaped(`Server '${v.server}' runs in a sandbox:`));
    line(`  network:    ${typeof s.network === 'string' ? s.network : `only through the warden's proxy, to ${s.network.domains.map((d) => printable(d)).join(', ')} (a name alone: ports 443 and 80)`}`);
    line(`  writes:     its data directory, a private /tmp${s.write.map((p) => `, ${printable(p, 200)}`).join('')}`);
    line(`  home reads: ${s.read.allow.length ? s.read.allow.map((p) => printable(p, 200)).join(', ') : 'none'}`);
    if (s.read.deny.length) line(`  hidden too: ${s.read.deny.map((p) => printable(p, 200)).join(', ')}`);
  }
  if (v.pin.state !== 'none' && v.pin.state !== 'pinned') line(escaped(`  NOT PINNED (${v.pin.state}): launches are refused until it is pinned: ${cmd(`sandbox ${v.server} --pin`)}`));
  if (v.engine && 'code' in v.engine) line(`  cannot be applied on this host (${v.engine.code}): ${escaped(v.engine.message)}`);
  else if (v.engine) line(`  engine:     bubblewrap, ${v.engine.file}`);
}

/** What to do after a sandbox is applied: the lock and canary were recorded unconfined, and a confined server may
 *  describe its tools otherwise or answer its canary otherwise (it finds no file it wrote before, a folder
 *  read-only). The warden never pins what it sees confined on its own; the operator checks and decides. */
function printConfinedNext(id: string, check: SurfaceCheck, cmd: (rest: string) => string): void {
  line(escaped(`Its lock and canary were recorded unconfined; its surface, launched confined now (what ${cmd(`verify ${id}`)} checks):`));
  describeOutcome(check, false);
  const canary = `its canary is checked at each session: if it fails confined, record it again: ${cmd(`canary record ${id}`)}`;
  if (check.error) line(escaped(`Next: fix what stopped the check, then check it again with ${cmd(`verify ${id}`)}; ${canary}`));
  else if (check.status === 'drift') line(escaped(`Next: until you decide, its sessions hide or refuse what drifted: review it with ${cmd(`diff ${id}`)}, then accept it with ${cmd(`pin ${id}`)} (nothing was pinned); ${canary}`));
  else line(escaped(`Next: ${canary}`));
}

/** `mcp-warden sandbox <id>`: show, or change with the flags. */
export async function sandboxVerb(homeFlag: string | undefined, id: string, opts: SandboxOptions): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const cmd = (rest: string): string => command(homeFlag, paths.home, rest);
  const edits: SandboxEdits = {
    ...(opts.network !== undefined ? { network: opts.network } : {}),
    ...(opts.allowWrite ? { allowWrite: opts.allowWrite } : {}),
    ...(opts.allowRead ? { allowRead: opts.allowRead } : {}),
    ...(opts.denyRead ? { denyRead: opts.denyRead } : {}),
    ...(opts.allowDomain ? { allowDomain: opts.allowDomain } : {}),
    ...(opts.unconfined ? { unconfined: true } : {}),
    ...(opts.clear ? { clear: true } : {}),
  };
  if (opts.propose) {
    if (Object.keys(edits).length > 0) throw new WardenError('USAGE', `--propose applies the saved proposal of server '${id}' as it is; it cannot be combined with another sandbox flag. Nothing was changed.`);
    // The names its confined sessions asked for (sandbox/propose-network.ts): shown, never applied by --yes.
    const network = networkSeen(recentEvents(paths.audit), id, loadServers(paths).servers[id]?.sandbox);
    const offers = network.refused.length + network.notGrantable.length > 0;
    let proposal: SandboxProposal | undefined;
    try {
      proposal = loadProposal(paths, id);
    } catch (err) {
      if (opts.yes || !offers) throw err; // with nothing of its own to show, the missing proposal is the answer
    }
    if (!opts.yes || proposal === undefined) {
      if (opts.json) printJson({ ...(proposal ? { proposal, file: proposalFile(paths, id) } : {}), network });
      else {
        if (proposal) printProposal(proposal, proposalFile(paths, id), cmd);
        printNetworkSeen(network, id, cmd);
      }
      return 0;
    }
    const change = await applyProposal(paths, id, proposal, opts.pin === true);
    if (!opts.json) {
      for (const e of proposal.env) line(escaped(`Set ${printable(e.name)}=${printable(e.value, 300)} in the environment of server '${id}'.`));
      line(said(id, change));
      if (network.refused.length > 0) line(escaped(`The names its confined sessions asked for were not granted (never by --propose): see ${cmd(`sandbox ${id} --propose`)}`));
    }
    const view = sandboxView(paths, id);
    if (!opts.json) printView(view, cmd, false);
    // The check `verify` makes, on the server as it now launches (confined): reported, never pinned.
    const check = change.changed ? await checkSurface(paths, id) : undefined;
    if (opts.json) printJson({ ...view, change, ...(check ? { check: jsonOf(check) } : {}) });
    else if (check) printConfinedNext(id, check, cmd);
    return 0;
  }
  if (opts.unconfined && !opts.yes) throw new WardenError('USAGE', `--unconfined records that server '${id}' runs with every file and address of the user, on purpose; confirm it with --yes. Nothing was changed.`);
  let change: SandboxChange | undefined;
  if (Object.keys(edits).length > 0 || opts.pin) {
    change = await changeSandbox(paths, id, edits, opts.pin === true);
    if (!opts.json) line(escaped(said(id, change)));
  }
  const view = sandboxView(paths, id);
  if (opts.json) printJson({ ...view, ...(change ? { change } : {}) });
  else printView(view, cmd, hasProposal(paths, id));
  return 0;
}
