import { createHash, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';
import { applyBundle, verifyBundleFile } from '../fleet/apply.js';
import { createBundle } from '../fleet/create.js';
import { findIdentityToken } from '../fleet/identity-token.js';
import { DEFAULT_FULCIO_URL, DEFAULT_REKOR_URL, signKeyless } from '../fleet/keyless-sign.js';
import { keyHint, readPrivateKey, readPublicKey, signWithKey, type SignerPolicy } from '../fleet/signature.js';
import { writeAtomic } from '../store/atomic.js';
import { parseBundle } from '../store/bundle/format.js';
import { updateBundleState } from '../store/bundle/state.js';
import { openHome } from '../store/home.js';
import { resolveHome, type HomePaths } from '../store/paths.js';
import { loadTrustRoot } from '../store/trust-root-file.js';
import { escaped, line, printJson } from './output.js';

// `bundle create | sign | verify | apply` (docs/bundles.md): parsing the flags and printing; the use cases are
// in fleet/.

export interface CreateFlags { servers?: string; out: string; serial?: string; machineLocal: string[]; accept: string[]; json?: boolean }
export interface SignFlags { key?: string; keyless?: boolean; fulcioUrl?: string; rekorUrl?: string; json?: boolean }
export interface TrustFlags { key?: string; identity?: string; issuer?: string; json?: boolean }
export interface ApplyFlags extends TrustFlags { allowRollback?: boolean; env: string[]; passEnv?: string[]; adopt?: string[]; allowUnsigned?: string[] }

const usage = (message: string): WardenError => new WardenError('USAGE', message);

function readText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new WardenError('FILE_UNREADABLE', `${what} ${file} cannot be read (${errnoOf(err) ?? String(err)}). Check the path.`);
  }
}

function readBytes(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new WardenError('FILE_UNREADABLE', `the trust bundle ${file} cannot be read (${errnoOf(err) ?? String(err)}). Check the path.`);
  }
}

export async function bundleCreate(homeFlag: string | undefined, flags: CreateFlags): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  let serial: number | undefined;
  if (flags.serial !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(flags.serial) || !Number.isSafeInteger(Number(flags.serial))) throw usage(`--serial ${flags.serial}: expected a positive integer below 2^53.`);
    serial = Number(flags.serial);
  }
  const accept: Record<string, string[]> = {};
  for (const a of flags.accept) {
    const m = /^(\/.*)=([0-9a-f]{64})$/.exec(a);
    if (!m) throw usage(`--accept ${a}: expected /ABSOLUTE/PATH=<64 lowercase hex digits>.`);
    (accept[m[1] as string] ??= []).push(m[2] as string);
  }
  const servers = flags.servers?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const now = new Date();
  const { bundle, text } = createBundle(paths, { ...(servers ? { servers } : {}), ...(serial !== undefined ? { serial } : {}), machineLocal: flags.machineLocal.map((p) => path.resolve(p)), accept, now });
  const out = path.resolve(flags.out);
  writeAtomic(out, text);
  const sha256 = createHash('sha256').update(text).digest('hex');
  await updateBundleState(paths, (s) => {
    if (!s.created || s.created.serial < bundle.serial) s.created = { serial: bundle.serial, sha256, at: now.toISOString() };
  });
  if (flags.json) printJson({ file: out, serial: bundle.serial, sha256, servers: Object.keys(bundle.servers).sort(), artifacts: bundle.artifacts });
  else {
    line(escaped(`Wrote trust bundle ${out}: serial ${bundle.serial}, ${Object.keys(bundle.servers).length} server(s) (${Object.keys(bundle.servers).sort().join(', ')}), ${bundle.artifacts.length} artifact(s); env values left out, only their names.`));
    line(`Sign it with: mcp-warden bundle sign ${out} --key PRIVATE.pem (or --keyless in CI: docs/bundles.md)`);
  }
  return 0;
}

export async function bundleSign(homeFlag: string | undefined, file: string, flags: SignFlags): Promise<number> {
  if ((flags.key === undefined) === (flags.keyless !== true)) throw usage('bundle sign takes exactly one of --key PRIVATE.pem or --keyless.');
  if (!flags.keyless && (flags.fulcioUrl !== undefined || flags.rekorUrl !== undefined)) throw usage('--fulcio-url and --rekor-url go with --keyless.');
  const bundleFile = path.resolve(file);
  const sigFile = `${bundleFile}.sigstore.json`;
  const bytes = readBytes(bundleFile);
  parseBundle(bytes, bundleFile); // only a valid bundle is signed
  if (flags.keyless) {
    const fulcioUrl = sigstoreUrl(flags.fulcioUrl, 'fulcio', DEFAULT_FULCIO_URL);
    const rekorUrl = sigstoreUrl(flags.rekorUrl, 'rekor', DEFAULT_REKOR_URL);
    const root = loadTrustRoot(resolveHome(homeFlag));
    const identity = await findIdentityToken(process.env, new Date());
    const signed = await signKeyless(bytes, identity, { fulcioUrl, rekorUrl, root, sigFile });
    writeAtomic(sigFile, JSON.stringify(signed.json, null, 2) + '\n');
    const { san, issuer } = signed.signer;
    if (flags.json) printJson({ file: bundleFile, signature: sigFile, keyless: true, identity: san, issuer, fulcio: fulcioUrl, rekor: rekorUrl, logIndex: signed.logIndex });
    else {
      line(`Signed ${bundleFile} keyless as ${escaped(san)} (issuer ${escaped(issuer)}): Fulcio certificate from ${fulcioUrl}, Rekor entry ${signed.logIndex} at ${rekorUrl}; wrote ${sigFile}.`);
      line(`Pin this signer on the other machines: mcp-warden bundle apply ${bundleFile} --identity '${escaped(san)}' --issuer '${escaped(issuer)}' (docs/bundles.md: which part of it to pin).`);
    }
    return 0;
  }
  const keyFile = path.resolve(flags.key as string);
  const key = readPrivateKey(readText(keyFile, 'the signing key'), keyFile);
  writeAtomic(sigFile, JSON.stringify(signWithKey(bytes, key, keyFile), null, 2) + '\n');
  if (flags.json) printJson({ file: bundleFile, signature: sigFile, keyless: false, key: keyHint(createPublicKey(key)) });
  else line(`Signed ${bundleFile}: wrote ${sigFile}.`);
  return 0;
}

/** A Fulcio or Rekor base URL: the flag, else MCP_WARDEN_<NAME>_URL, else sigstore's public-good instance. */
function sigstoreUrl(flag: string | undefined, name: 'fulcio' | 'rekor', fallback: string): string {
  const envName = `MCP_WARDEN_${name.toUpperCase()}_URL`;
  const given = flag ?? (process.env[envName] || undefined);
  if (given === undefined) return fallback;
  const from = flag !== undefined ? `--${name}-url` : envName;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw usage(`${from} ${escaped(given)} is not a URL; expected https://HOST[/PATH] (default ${fallback}).`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  // The identity token goes to Fulcio: over TLS, or over loopback (a local stand-in or a tunnel).
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw usage(`${from} ${escaped(given)}: expected an https:// URL (plain http only to a loopback address).`);
  if (url.username || url.password || url.search || url.hash) throw usage(`${from}: expected https://HOST[/PATH], without credentials, query or fragment.`);
  return url.href.replace(/\/+$/, '');
}

function policyOf(paths: HomePaths, flags: TrustFlags): SignerPolicy {
  const byKey = flags.key !== undefined;
  const byIdentity = flags.identity !== undefined || flags.issuer !== undefined;
  if (byKey === byIdentity) throw usage('give the pinned signer: --key PUBLIC.pem, or --identity SAN --issuer ISSUER (not both).');
  if (byKey) {
    const keyFile = path.resolve(flags.key as string);
    return { key: readPublicKey(readText(keyFile, 'the public key'), keyFile), keyFile };
  }
  if (!flags.identity || !flags.issuer) throw usage('--identity and --issuer go together: the signer SAN pattern (anchored; * matches any run) and the exact OIDC issuer URL.');
  return { identity: flags.identity, issuer: flags.issuer, root: loadTrustRoot(paths) };
}

export function bundleVerify(homeFlag: string | undefined, file: string, flags: TrustFlags): number {
  const paths = resolveHome(homeFlag);
  const v = verifyBundleFile(path.resolve(file), policyOf(paths, flags));
  if (flags.json) printJson({ ok: true, serial: v.bundle.serial, sha256: v.sha256, signer: v.signer, servers: Object.keys(v.bundle.servers).sort() });
  else line(escaped(`OK: ${path.resolve(file)} (serial ${v.bundle.serial}, servers ${Object.keys(v.bundle.servers).sort().join(', ')}) is signed by ${v.signer}.`));
  return 0;
}

function envValues(flags: string[]): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const f of flags) {
    const m = /^(.+)\.([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(f);
    if (!m) throw usage(`--env ${f.split('=')[0]}=...: expected SERVER.NAME=VALUE.`);
    const id = m[1] as string;
    if (!out.has(id)) out.set(id, new Map());
    out.get(id)?.set(m[2] as string, m[3] as string);
  }
  return out;
}

function passNames(flags: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of flags) {
    const m = /^(.+)\.([A-Za-z_][A-Za-z0-9_]*)$/s.exec(f);
    if (!m) throw usage(`--pass-env ${f}: expected SERVER.NAME.`);
    out.set(m[1] as string, [...(out.get(m[1] as string) ?? []), m[2] as string]);
  }
  return out;
}

export async function bundleApply(homeFlag: string | undefined, file: string, flags: ApplyFlags): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, true);
  const policy = policyOf(paths, flags);
  const r = await applyBundle(paths, path.resolve(file), policy, { allowRollback: flags.allowRollback === true, env: envValues(flags.env), passEnv: passNames(flags.passEnv ?? []), adopt: new Set(flags.adopt ?? []), allowUnsigned: flags.allowUnsigned ?? [], now: new Date() });
  if (flags.json) printJson({ ok: true, ...r });
  else {
    line(escaped(`Applied trust bundle serial ${r.serial}${r.rollback ? ` (a ROLLBACK from serial ${r.previousSerial}, admitted by --allow-rollback)` : ''}, signed by ${r.signer}.`));
    for (const p of r.packages ?? []) line(escaped(`Installed ${p.package} into the store (${p.entry}${p.created ? '' : ', already there'}) for ${p.servers.join(', ')}: integrity, provenance and tree digest verified here.`));
    line(escaped(`Servers: ${r.servers.join(', ')}. Allowlist: ${r.added.length} added, ${r.replaced.length} replaced${r.retired.allowlist.length > 0 ? `, ${r.retired.allowlist.length} removed` : ''}. tools.lock and warden.lock entries replaced for these servers.`));
    if (r.retired.servers.length > 0) line(escaped(`Removed (named by the previous bundle, not by this one): ${r.retired.servers.join(', ')}, with their lock entries.${r.endedSessions.length > 0 ? ` Running sessions asked to end: ${r.endedSessions.map((s) => `${s.server} (pid ${s.pid})`).join(', ')}.` : ''}`));
  }
  return 0;
}
