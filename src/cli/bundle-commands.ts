import type { Command } from 'commander';
import type { ApplyFlags, CreateFlags, SignFlags, TrustFlags } from './bundle.js';

// The `bundle` verbs' options, wired to commander by main.ts; bundle.js (and sigstore) load only when one runs.

type Act = <A extends (...args: never[]) => number | Promise<number>>(fn: A) => (...args: Parameters<A>) => void;

export function addBundleCommands(program: Command, act: Act, home: () => string | undefined): void {
  const repeat = (v: string, acc: string[]): string[] => [...acc, v];
  const bundle = program.command('bundle').description('signed trust bundles: the reviewed setup of one home, applied on others (docs/bundles.md)');
  bundle
    .command('create')
    .description("write the servers' entries (env names, never values), their allowlist entries and lock entries as one trust bundle")
    .requiredOption('--out <file>', 'where to write the bundle')
    .option('--servers <ids>', 'comma-separated server ids (default: all)')
    .option('--serial <n>', 'the serial number (default: the current Unix time, or one above the last created or applied here)')
    .option('--machine-local <path>', "leave this artifact (the interpreter) to each machine's own allowlist (repeatable)", repeat, [] as string[])
    .option('--accept <path=sha256>', 'also accept this digest for an artifact, as another machine has it (repeatable)', repeat, [] as string[])
    .option('--json', 'machine-readable output')
    .action(act(async (opts: CreateFlags) => (await import('./bundle.js')).bundleCreate(home(), opts)));
  bundle
    .command('sign')
    .description('sign a bundle; writes FILE.sigstore.json beside it')
    .argument('<file>', 'the bundle')
    .option('--key <private.pem>', 'a local ECDSA P-256 or Ed25519 private key (PEM)')
    .option('--keyless', "sigstore keyless signing: a Fulcio certificate for this CI job's OIDC identity (SIGSTORE_ID_TOKEN, or GitHub Actions with id-token: write), a Rekor entry")
    .option('--fulcio-url <url>', 'keyless: the Fulcio instance (default: $MCP_WARDEN_FULCIO_URL, else https://fulcio.sigstore.dev)')
    .option('--rekor-url <url>', 'keyless: the Rekor instance (default: $MCP_WARDEN_REKOR_URL, else https://rekor.sigstore.dev)')
    .option('--json', 'machine-readable output')
    .action(act(async (file: string, opts: SignFlags) => (await import('./bundle.js')).bundleSign(home(), file, opts)));
  bundle
    .command('verify')
    .description("verify a bundle's signature (FILE.sigstore.json) against a pinned signer")
    .argument('<file>', 'the bundle')
    .option('--key <public.pem>', "the signer's public key (PEM)")
    .option('--identity <san>', 'keyless: the signer SAN pattern (anchored; * matches any run)')
    .option('--issuer <url>', 'keyless: the OIDC issuer, exactly')
    .option('--json', 'machine-readable output')
    .action(act(async (file: string, opts: TrustFlags) => (await import('./bundle.js')).bundleVerify(home(), file, opts)));
  bundle
    .command('apply')
    .description('verify a bundle, check every digest it names on this machine, and replace the trust files in one step')
    .argument('<file>', 'the bundle')
    .option('--key <public.pem>', "the signer's public key (PEM)")
    .option('--identity <san>', 'keyless: the signer SAN pattern (anchored; * matches any run)')
    .option('--issuer <url>', 'keyless: the OIDC issuer, exactly')
    .option('--env <server.NAME=VALUE>', "this machine's value for an env name the bundle lists (repeatable)", repeat, [] as string[])
    .option('--pass-env <server.NAME>', "agree to pass this machine's variable NAME to the bundle's server (repeatable); a name its entry here does not pass already is refused without it", repeat, [] as string[])
    .option('--adopt <server>', 'hand a server this machine configured itself over to the bundle, which names it (repeatable)', repeat, [] as string[])
    .option('--allow-unsigned <server>', 'agree to install this server from a package the bundle says was admitted without provenance (repeatable; audited)', repeat, [] as string[])
    .option('--allow-rollback', 'admit a serial not above the last applied one (audited)')
    .option('--json', 'machine-readable output')
    .action(act(async (file: string, opts: ApplyFlags) => (await import('./bundle.js')).bundleApply(home(), file, opts)));
}
