import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makingDir, publish, published } from '../helpers/run-scratch.js';
import { SERVERS, TRUSTED_PATH, WARDEN, addServer, cli, tempDir, type CliResult } from '../helpers/warden.js';

// Two warden homes standing in for two machines, a server both can run from the same path, and local keys.

export const SECRET = 'a-value-that-must-stay-on-machine-a';
export const TRUST_FILES = ['servers.json', 'allowlist.json', 'tools.lock', 'warden.lock', 'bundle-state.json'];

export interface KeyPair {
  priv: string;
  pub: string;
}

/** A fresh key pair written as PEM files in `dir`. */
export function keyPair(dir: string, name: string, type: 'ec' | 'ed25519' = 'ec'): KeyPair {
  const { privateKey, publicKey } = type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  const priv = path.join(dir, `${name}.pem`);
  const pub = path.join(dir, `${name}.pub.pem`);
  fs.writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  fs.writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
  return { priv, pub };
}

/** A home (mode 0700) with its own servers.json: this machine's trusted PATH and no server yet. */
export function machine(root: string, name: string): string {
  const home = path.join(root, name);
  fs.mkdirSync(home, { mode: 0o700 });
  fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, path: TRUSTED_PATH, servers: {} }, null, 2) + '\n', { mode: 0o600 });
  return home;
}

/** A copy of test/servers/basic.mjs (with its lib/ and package.json) the test may change. */
export function serverCopy(root: string): string {
  const dir = path.join(root, 'srv');
  fs.mkdirSync(dir);
  for (const f of ['basic.mjs', 'package.json', 'lib']) fs.cpSync(path.join(SERVERS, f), path.join(dir, f), { recursive: true });
  return path.join(dir, 'basic.mjs');
}

/** Home A: the basic server enrolled with an env value that must never leave it. */
export function machineA(root: string, script: string): string {
  const home = machine(root, 'A');
  addServer(home, 'basic', ['node', script], ['--env', `SECRET_TOKEN=${SECRET}`]);
  return home;
}

/**
 * Home A as `machineA(root, serverCopy(root))` leaves it, for a file that only runs the server and never changes
 * its script: enrolled once per run (the `add` launches the server three times) in the run's scratch directory
 * (test/helpers/run-scratch.ts), with the script copied there, and copied to ROOT/A for each caller. Home A names
 * no path inside itself, so the copy is the home the `add` would have made there; it names the shared script,
 * which machines B then run from the same path, as they would ROOT/srv/basic.mjs.
 */
export function sharedMachineA(root: string): { homeA: string; script: string } {
  let dir = published('bundle-machine-a');
  if (!dir) {
    const fresh = makingDir('bundle-machine-a');
    machineA(fresh, serverCopy(fresh));
    dir = publish(fresh, 'bundle-machine-a');
  }
  const homeA = path.join(root, 'A');
  fs.cpSync(path.join(dir, 'A'), homeA, { recursive: true, preserveTimestamps: true, errorOnExist: true, force: false });
  return { homeA, script: path.join(dir, 'srv', 'basic.mjs') };
}

/** The bytes of each trust file of a home (null: absent). */
export function snapshot(home: string): Record<string, string | null> {
  return Object.fromEntries(TRUST_FILES.map((f) => [f, fs.existsSync(path.join(home, f)) ? fs.readFileSync(path.join(home, f), 'base64') : null]));
}

/** `bundle create` + `bundle sign` on home A; returns the bundle's path. */
export function signedBundle(homeA: string, out: string, key: KeyPair, flags: string[] = []): string {
  const c = cli(homeA, ['bundle', 'create', '--out', out, ...flags]);
  if (c.code !== 0) throw new Error(`bundle create failed (${c.code}): ${c.stderr}`);
  const s = cli(homeA, ['bundle', 'sign', out, '--key', key.priv]);
  if (s.code !== 0) throw new Error(`bundle sign failed (${s.code}): ${s.stderr}`);
  return out;
}

export { tempDir };

/** The test process's environment without any identity token it may have (a CI job running these tests). */
export function envWithoutIdentity(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['SIGSTORE_ID_TOKEN', 'ACTIONS_ID_TOKEN_REQUEST_URL', 'ACTIONS_ID_TOKEN_REQUEST_TOKEN', 'GITHUB_ACTIONS', 'MCP_WARDEN_FULCIO_URL', 'MCP_WARDEN_REKOR_URL']) delete env[name];
  return { ...env, ...extra };
}

/** `mcp-warden --home HOME ...args` without blocking this process, so stand-in servers in it can answer. */
export function cliAsync(home: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WARDEN, '--home', home, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
