import type { Command } from 'commander';

// The verbs of the lock and its review (lock, verify, diff, scan, pin), wired to commander by main.ts; each verb's
// module loads only when it runs.

type Act = <A extends (...args: never[]) => number | Promise<number>>(fn: A) => (...args: Parameters<A>) => void;

export function addSurfaceCommands(program: Command, act: Act, home: () => string | undefined, acceptFindingsHelp: string): void {
  program
    .command('lock')
    .description('capture the tool surface of a server that has no entry in tools.lock')
    .argument('<id>', 'server id')
    .option('--accept-findings <codes>', acceptFindingsHelp)
    .action(act(async (id: string, opts: { acceptFindings?: string }) => (await import('./lock.js')).lockVerb(home(), id, opts.acceptFindings)));
  program
    .command('verify')
    .description('re-launch, re-list and compare with tools.lock; exit 1 on drift')
    .argument('[ids...]', 'servers (default: every locked server)')
    .option('--json', 'machine-readable output')
    .action(act(async (ids: string[], opts: { json?: boolean }) => (await import('./verify.js')).verifyVerb(home(), ids, opts.json === true)));
  program
    .command('diff')
    .description('what changed since the lock: tools, fields, severity')
    .argument('<id>', 'server id')
    .option('--json', 'machine-readable output')
    .action(act(async (id: string, opts: { json?: boolean }) => (await import('./verify.js')).diffVerb(home(), id, opts.json === true)));
  program
    .command('scan')
    .description('scan what tools.lock holds for hidden text, instructions to the model, secret-seeking parameters and shadowing; exit 1 while a high finding stands')
    .argument('[id]', 'server id')
    .option('--all', 'every locked server')
    .option('--json', 'machine-readable output')
    .action(act(async (id: string | undefined, opts: { all?: boolean; json?: boolean }) => (await import('./scan.js')).scanVerb(home(), id, opts)));
  program
    .command('pin')
    .description('accept the served surface (or one tool of it) into tools.lock')
    .argument('<id>', 'server id')
    .option('--tool <name>', 'accept only this tool')
    .option('--accept-findings <codes>', acceptFindingsHelp)
    .action(act(async (id: string, opts: { tool?: string; acceptFindings?: string }) => (await import('./lock.js')).pinVerb(home(), id, opts.tool, opts.acceptFindings)));
}
