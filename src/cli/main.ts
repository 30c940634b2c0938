#!/usr/bin/env node
import path from 'node:path';
import type { ImportOptions } from './import.js';
import type { UnwrapOptions } from './unwrap.js';
import type { InstallOptions } from './install.js';
import type { UpgradeOptions } from './upgrade.js';
import type { TrustRootUpdateOptions } from './trust-root.js';
import type { RulesOptions } from './rules.js';
import type { SandboxOptions } from './sandbox.js';
import { exitWhenFlushed, settle } from './outcome.js';
import { wardenVersion } from '../daemon/version.js';
import { enableOwnCompileCache } from '../compile-cache.js';

/** Help of --accept-findings, for every verb that locks (cli/accept-findings.ts reads it). */
const ACCEPT_FINDINGS_HELP = 'lock despite high-severity scan findings of these codes (comma-separated; audited)';

// The command line: one verb per file; this file only wires them to commander and maps failures to exit
// codes (2 for usage, a WardenError's own code otherwise). Expected failures print one sentence, no stack.
// A verb's module is imported when that verb runs, not before: importing all of them (sigstore, tar, the npm
// client, the daemon's metrics) took ~400 ms of every `run` (docs/performance.md).

type Action = (...args: never[]) => number | Promise<number>;

/** Completes a change of several trust files that was interrupted (store/journal.ts) before any verb reads them;
 *  one lstat when there is none, and the store's modules are imported only when there is one. */
async function settleHome(flag: string | undefined): Promise<void> {
  const [{ resolveHome }, fs] = await Promise.all([import('../store/paths.js'), import('node:fs')]);
  const paths = resolveHome(flag);
  let present = true; // a journal that cannot be inspected is settle's to report
  try {
    present = fs.lstatSync(paths.commitJournal, { throwIfNoEntry: false }) !== undefined;
  } catch {}
  if (!present) return;
  const { settlePendingCommit } = await import('../store/update.js');
  await settlePendingCommit(paths.home);
}

/** The words a client starts `run` with (`[--home DIR] run ID`), or undefined for anything else, which goes
 *  through the whole command line. Building that (commander and every verb's options) is time on the launch. */
function plainRun(args: string[]): { home?: string; id: string } | undefined {
  const word = (w: string | undefined): w is string => w !== undefined && w !== '' && !w.startsWith('-');
  const [a, b, c, d] = args;
  if (args.length === 2 && a === 'run' && word(b)) return { id: b };
  if (args.length === 4 && a === '--home' && word(b) && c === 'run' && word(d)) return { home: b, id: d };
  if (args.length === 3 && a?.startsWith('--home=') && word(a.slice(7)) && b === 'run' && word(c)) return { home: a.slice(7), id: c };
  return undefined;
}

async function main(argv: string[]): Promise<void> {
  // Before any verb's module is imported: their compiled code may come from node's cache (compile-cache.ts).
  enableOwnCompileCache();
  // node ignores SIGXFSZ, so a write past a file size limit fails with EFBIG, which is reported (FILE_UNWRITABLE)
  // with the file left as it was; signal-exit (in proper-lockfile) would re-raise it and end the command mid-way
  // unless another listener is present.
  process.on('SIGXFSZ', () => undefined);
  // A closed stdout (a reader that went away, `| head`) is not an error of the warden. For `run` it means the
  // client is gone, and its session ends on stdin EOF; for every other verb there is nothing left to say.
  const isRun = argv.slice(2).includes('run');
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (!isRun) process.exit(process.exitCode ?? 0);
  });
  const run = plainRun(argv.slice(2));
  if (run) {
    // By its path, so that scripts/bundle.mjs leaves it out of the chunks: dist/bundle/plain-run.js is one file.
    let plain: typeof import('./plain-run.js');
    try {
      plain = (await import(new URL('./plain-run.js', import.meta.url).href)) as typeof import('./plain-run.js');
    } catch (err) {
      settle(Promise.reject(err as Error));
      return;
    }
    plain.startPlainRun(run.home, run.id);
    return;
  }
  const { Command, CommanderError, Option } = await import('commander');
  const program = new Command('mcp-warden')
    .description('Supply-chain attestation supervisor for stdio MCP servers')
    .option('--home <dir>', 'the warden home (default: $MCP_WARDEN_HOME, else $XDG_CONFIG_HOME/mcp-warden)')
    .version(wardenVersion(), '--version', 'print the version of mcp-warden (package.json) and exit')
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(`mcp-warden: ${str}`) });

  let outcome: Promise<number> = Promise.resolve(0);
  const home = (): string | undefined => program.opts<{ home?: string }>().home;
  const act =
    <A extends Action>(fn: A) =>
    (...args: Parameters<A>): void => {
      outcome = Promise.resolve().then(async () => {
        await settleHome(home());
        return fn(...args);
      });
    };

  program
    .command('run')
    .description('launch an allowlisted server and relay its stdio (what the MCP client runs)')
    .argument('<id>', 'server id in servers.json')
    .action(act(async (id: string) => exitWhenFlushed(await (await import('./run.js')).runVerb(home(), id))));

  program
    .command('add')
    .description('resolve, digest and allowlist a server command, and add it to servers.json')
    .argument('<id>', 'server id')
    .argument('<command...>', 'the command line, after --')
    .option('--env <NAME[=VALUE]>', 'set NAME=VALUE for the server (kept in servers.json), or pass NAME through (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--pass-env <NAME>', "pass NAME through from the client's environment (repeatable; nothing stored)", (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--cwd <dir>', 'working directory of the server (absolute)')
    .addOption(new Option('--posture <posture>', 'what to do on drift').choices(['enforce', 'monitor']))
    .option('--accept-findings <codes>', ACCEPT_FINDINGS_HELP)
    .option('--yes', 'do not ask for confirmation')
    .action(act(async (id: string, commandLine: string[], opts: { env: string[]; passEnv: string[]; cwd?: string; posture?: 'enforce' | 'monitor'; acceptFindings?: string; yes?: boolean }) => (await import('./add.js')).addVerb(home(), id, commandLine, opts)));

  const allowlist = program.command('allowlist').description('manage trusted artifacts');
  allowlist
    .command('list')
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./allowlist.js')).allowlistList(home(), opts.json === true)));
  allowlist
    .command('add')
    .argument('<path>', 'file or package directory to trust as it is now')
    .option('--note <text>', 'why it is trusted')
    .action(act(async (p: string, opts: { note?: string }) => (await import('./allowlist.js')).allowlistAdd(home(), p, opts.note)));
  allowlist
    .command('remove')
    .argument('<path>', 'the exact path as listed')
    .action(act(async (p: string) => (await import('./allowlist.js')).allowlistRemove(home(), p)));
  allowlist
    .command('verify')
    .description('re-digest every entry; exit 1 if any changed')
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./allowlist.js')).allowlistVerify(home(), opts.json === true)));

  (await import('./surface-commands.js')).addSurfaceCommands(program, act, home, ACCEPT_FINDINGS_HELP);

  // The edit flags of `rules`, kept in the order given (a later one sees what an earlier one did).
  const ruleEdits: [string, string][] = [];
  const ruleEdit = (flag: string) => (value: string): string => (ruleEdits.push([flag, value]), value);
  program
    .command('rules')
    .description("show the operator's rules of a server (mode, policy per kind, each locked tool's rule); the flags change them, each change validated, pinned in warden.lock and audited")
    .argument('<id>', 'server id')
    .option('--json', 'machine-readable output')
    .option('--mode <mode>', 'strict (only classified tools are listed and callable) or open', ruleEdit('mode'))
    .option('--kind <TOOL=KIND>', 'classify a tool: read, local-change, remote-change or destructive (repeatable)', ruleEdit('kind'))
    .option('--unclassify <TOOL>', "remove a tool's rule (repeatable)", ruleEdit('unclassify'))
    .option('--policy <KIND=DECISION>', 'what a call of a kind may do: allow, ask, deny, or default (repeatable)', ruleEdit('policy'))
    .option('--allow-hint-mismatch <TOOL>', "accept that the server's annotations claim more danger than the tool's kind (repeatable)", ruleEdit('allow-hint-mismatch'))
    .option('--no-allow-hint-mismatch <TOOL>', 'stop accepting it (repeatable)', ruleEdit('no-allow-hint-mismatch'))
    .option('--deny <TOOL:PARAM>', 'a parameter the client may not send, hidden from the schema it is shown (repeatable)', ruleEdit('deny'))
    .option('--undeny <TOOL:PARAM>', 'allow a denied parameter again (repeatable)', ruleEdit('undeny'))
    .option('--fix <TOOL:PARAM=JSON>', 'a parameter the warden sets to this JSON value on every call (repeatable)', ruleEdit('fix'))
    .option('--unfix <TOOL:PARAM>', 'stop fixing a parameter (repeatable)', ruleEdit('unfix'))
    .option('--describe <TOOL=TEXT>', "show the client this description in place of the server's (repeatable)", ruleEdit('describe'))
    .option('--undescribe <TOOL>', "show the server's own description again (repeatable)", ruleEdit('undescribe'))
    .option('--ask-timeout <SECONDS>', "how long a call of an 'ask' kind waits for the user's answer", ruleEdit('ask-timeout'))
    .option('--clear', 'remove the rules object first: the lock alone decides, as for a server without rules')
    .option('--pin', 'pin the rules as they are now (after a hand edit of servers.json), before any other change')
    .option('--propose', "propose a classification from the server's own annotations (its claim), to apply as strict mode")
    .option('--yes', 'with --propose: apply the proposal without asking')
    .action(act(async (id: string, opts: RulesOptions) => (await import('./rules.js')).rulesVerb(home(), id, opts, ruleEdits)));

  const many = (value: string, prev: string[] = []): string[] => [...prev, path.resolve(value)];
  program
    .command('sandbox')
    .description("show a server's sandbox (what it may read, write and reach); the flags change it, each change validated, pinned in warden.lock and audited")
    .argument('<id>', 'server id')
    .option('--json', 'machine-readable output')
    .option('--network <level>', 'none (nothing outside the sandbox), loopback (its own loopback only) or any; --allow-domain for a list of names')
    .option('--allow-domain <name>', 'a domain the server may reach through the warden\'s proxy: NAME (ports 443, 80), NAME:PORT or localhost:PORT (repeatable)', (v: string, p: string[] = []) => [...p, v])
    .option('--allow-write <path>', 'a directory the server may write besides its data directory (repeatable)', many)
    .option('--allow-read <path>', "a part of the user's home the server may read (repeatable)", many)
    .option('--deny-read <path>', 'a path hidden from the server besides the homes and the warden home (repeatable)', many)
    .option('--unconfined', 'run this server without a sandbox, on purpose (with --yes; audited)')
    .option('--clear', 'remove the sandbox first')
    .option('--pin', 'pin the sandbox as it is now (after a hand edit of servers.json), before any other change')
    .option('--propose', 'show the sandbox proposed when the server was enrolled (what its enrollment launches wrote); with --yes, apply it')
    .option('--yes', 'confirm --unconfined, or apply the proposal of --propose')
    .action(act(async (id: string, opts: SandboxOptions) => (await import('./sandbox.js')).sandboxVerb(home(), id, opts)));

  const canary = program.command('canary').description('behavioural canaries: pinned answers and latency');
  canary
    .command('record')
    .argument('<id>', 'server id')
    .action(act(async (id: string) => (await import('./canary.js')).canaryRecordVerb(home(), id)));
  canary
    .command('check')
    .argument('<id>', 'server id')
    .option('--json', 'machine-readable output')
    .action(act(async (id: string, opts: { json?: boolean }) => (await import('./canary.js')).canaryCheckVerb(home(), id, opts.json === true)));

  program
    .command('daemon')
    .description('watch the trust files and every allowlisted file; alert on change; serve metrics and status')
    .option('--listen <host:port>', 'loopback address for /metrics and /status', '127.0.0.1:9464')
    .action(act(async (opts: { listen: string }) => exitWhenFlushed(await (await import('./daemon.js')).daemonVerb(home(), opts.listen))));

  const audit = program.command('audit').description('the hash-chained audit log');
  audit
    .command('verify')
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./audit.js')).auditVerify(home(), opts.json === true)));
  audit
    .command('show')
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./audit.js')).auditShow(home(), opts.json === true)));

  program
    .command('status')
    .description('per server: command, resolved path, digests, allowlisted or not')
    .argument('[id]', 'one server')
    .option('--json', 'machine-readable output')
    .action(act(async (id: string | undefined, opts: { json?: boolean }) => (await import('./status.js')).statusVerb(home(), id, opts.json === true)));

  const trustRoot = program.command('trust-root').description('the sigstore trust root npm provenance is verified against (offline)');
  trustRoot
    .command('show')
    .description('where the trust root in use came from, its date, and the validity window of each authority')
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./trust-root.js')).trustRootShow(home(), opts.json === true)));
  trustRoot
    .command('update')
    .description("store a newer trust root in the home: from sigstore's TUF repository, or from a file")
    .option('--from <file>', 'air-gapped: a sigstore trusted_root.json, the npm registry keys.json, or a trust-root.json')
    .option('--mirror <url>', 'a mirror of the sigstore TUF repository (default: https://tuf-repo-cdn.sigstore.dev)')
    .action(act(async (opts: TrustRootUpdateOptions) => (await import('./trust-root.js')).trustRootUpdate(home(), opts)));
  program
    .command('store')
    .description('the sealed package store')
    .command('gc')
    .description('remove store entries no server names, and half-made ones older than an hour')
    .option('--dry-run', 'list what would be removed; remove nothing')
    .action(act(async (opts: { dryRun?: boolean }) => (await import('./store.js')).storeGc(home(), opts.dryRun === true)));

  (await import('./bundle-commands.js')).addBundleCommands(program, act, home);

  program
    .command('import')
    .description("enroll the stdio servers of an MCP client's config file and rewrite them to run through the warden")
    .argument('<client-config-file>', 'claude_desktop_config.json, .mcp.json, ~/.claude.json, .cursor/mcp.json or .vscode/mcp.json')
    .option('--yes', 'do not ask before trusting and rewriting')
    .option('--dry-run', 'show the changes as a diff; write nothing')
    .option('--install', 'replace npx entries by a verified install of the package into the sealed store (as mcp-warden install)')
    .option('--allow-unsigned', 'with --install: admit packages without provenance (listed in the report, audited)')
    .option('--accept-findings <codes>', ACCEPT_FINDINGS_HELP)
    .option('--json', 'machine-readable output')
    .action(act(async (file: string, opts: ImportOptions) => (await import('./import.js')).importVerb(home(), file, opts)));

  program
    .command('install')
    .description('install an npm package into the sealed store after verifying its provenance, and enroll it as a server')
    .argument('<npm-spec>', 'name, name@version, name@tag or name@range (from the registry npm is configured with)')
    .argument('[server-args...]', 'arguments for the server, after --')
    .option('--id <id>', 'server id (default: the package name without its scope)')
    .option('--attestations <file>', "the package's attestations (the registry's JSON), when the registry does not serve them")
    .option('--identity <pattern>', 'require the signer identity (SAN) to match; * matches anything')
    .option('--allow-unsigned', 'admit a package without provenance (recorded in the audit log)')
    .option('--entry <file>', 'the file of the package to run with node, when it has no bin script or several')
    .option('--env <NAME[=VALUE]>', 'set NAME=VALUE for the server (kept in servers.json), or pass NAME through (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--pass-env <NAME>', "pass NAME through from the client's environment (repeatable; nothing stored)", (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--dry-run', 'verify and show everything; write nothing')
    .option('--accept-findings <codes>', ACCEPT_FINDINGS_HELP)
    .option('--yes', 'do not ask before trusting (never implies --allow-unsigned)')
    .option('--json', 'machine-readable output')
    .action(act(async (spec: string, serverArgs: string[], opts: InstallOptions) => (await import('./install.js')).installVerb(home(), spec, serverArgs, opts)));

  program
    .command('upgrade')
    .description("install an installed server's next version beside the old one, verify it is the same publisher's build, show the changes, and switch")
    .argument('<id>', 'server id (installed with mcp-warden install)')
    .option('--to <version>', 'this version, tag or range instead of the newest')
    .option('--allow-publisher-change', 'admit a build by another publisher than the pinned one (audited; the new one is pinned)')
    .option('--allow-unsigned', 'admit a version without provenance although the server requires it (audited)')
    .option('--preview', 'launch the new version out of band and show the surface diff; switch nothing')
    .option('--accept-findings <codes>', ACCEPT_FINDINGS_HELP)
    .option('--yes', 'launch it out of band and switch without asking')
    .option('--json', 'machine-readable output')
    .action(act(async (id: string, opts: UpgradeOptions) => (await import('./upgrade.js')).upgradeVerb(home(), id, opts)));

  program
    .command('doctor')
    .description('what each sandbox level confines on this host, from real probes; exit 1 when a level cannot be applied')
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./doctor.js')).doctorVerb(home(), opts.json === true)));

  program
    .command('outdated')
    .description("per installed server: the pinned version, the registry's newest, and whether it carries provenance from the pinned publisher")
    .option('--json', 'machine-readable output')
    .action(act(async (opts: { json?: boolean }) => (await import('./outdated.js')).outdatedVerb(home(), opts.json === true)));

  program
    .command('unwrap')
    .description('restore, byte for byte, the client config entries that import rewrote')
    .argument('<client-config-file>', 'a file imported before')
    .option('--dry-run', 'show the changes as a diff; write nothing')
    .option('--json', 'machine-readable output')
    .action(act(async (file: string, opts: UnwrapOptions) => (await import('./unwrap.js')).unwrapVerb(home(), file, opts)));

  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      const helpish = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help';
      process.exitCode = helpish ? 0 : 2;
      return;
    }
    throw err;
  }
  settle(outcome);
}

void main(process.argv);
