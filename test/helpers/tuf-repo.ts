import { spawn } from 'node:child_process';
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// A TUF repository of the tests' own, served on loopback, for `trust-root update --mirror`: the metadata a TUF
// client walks (N.root.json, timestamp.json, snapshot.json, targets.json) signed with ed25519 keys made here,
// and the target files. Root version N+1 is signed by the keys of N and its own, as a real rotation is.
// consistent_snapshot is off, so the files have plain names.

const SPEC = '1.0.31';

/** TUF's canonical JSON (OLPC) for the values used here: sorted keys, no whitespace, integers, plain strings. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface Key {
  id: string;
  json: Record<string, unknown>;
  private: KeyObject;
}

function newKey(): Key {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
  const json = { keytype: 'ed25519', scheme: 'ed25519', keyval: { public: raw } };
  return { id: crypto.createHash('sha256').update(canonical(json)).digest('hex'), json, private: privateKey };
}

function signed(body: Record<string, unknown>, keys: Key[]): Buffer {
  const signatures = keys.map((k) => ({ keyid: k.id, sig: crypto.sign(null, Buffer.from(canonical(body)), k.private).toString('hex') }));
  return Buffer.from(JSON.stringify({ signatures, signed: body }, null, 1));
}

export interface TufRepoOptions {
  /** The target files, by TUF path ("trusted_root.json", "registry.npmjs.org/keys.json"). */
  targets: Record<string, Buffer>;
  /** When each root version (1, 2, …) expires; the client starts from version 1. */
  rootExpiries: string[];
}

/** Writes the repository into `dir`; returns root version 1, the root a client must start from. */
export function writeTufRepo(dir: string, opts: TufRepoOptions): Buffer {
  fs.mkdirSync(path.join(dir, 'targets'), { recursive: true });
  const later = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  let previous: Key | undefined;
  let first: Buffer | undefined;
  let key = newKey();
  opts.rootExpiries.forEach((expires, i) => {
    key = newKey();
    const role = { keyids: [key.id], threshold: 1 };
    const body = {
      _type: 'root',
      spec_version: SPEC,
      version: i + 1,
      expires,
      consistent_snapshot: false,
      keys: { [key.id]: key.json },
      roles: { root: role, timestamp: role, snapshot: role, targets: role },
    };
    const bytes = signed(body, previous ? [previous, key] : [key]);
    fs.writeFileSync(path.join(dir, `${i + 1}.root.json`), bytes);
    first ??= bytes;
    previous = key;
  });
  const files: Record<string, unknown> = {};
  for (const [name, bytes] of Object.entries(opts.targets)) {
    fs.mkdirSync(path.dirname(path.join(dir, 'targets', name)), { recursive: true });
    fs.writeFileSync(path.join(dir, 'targets', name), bytes);
    files[name] = { length: bytes.length, hashes: { sha256: crypto.createHash('sha256').update(bytes).digest('hex') } };
  }
  fs.writeFileSync(path.join(dir, 'targets.json'), signed({ _type: 'targets', spec_version: SPEC, version: 1, expires: later, targets: files }, [key]));
  fs.writeFileSync(path.join(dir, 'snapshot.json'), signed({ _type: 'snapshot', spec_version: SPEC, version: 1, expires: later, meta: { 'targets.json': { version: 1 } } }, [key]));
  fs.writeFileSync(path.join(dir, 'timestamp.json'), signed({ _type: 'timestamp', spec_version: SPEC, version: 1, expires: later, meta: { 'snapshot.json': { version: 1 } } }, [key]));
  return first as Buffer;
}

export interface StaticServer {
  url: string;
  requests(): string[];
  close(): Promise<void>;
}

/** Serves `root` on loopback (static-server.mjs, a process of its own). */
export async function serveDirectory(root: string, log: string): Promise<StaticServer> {
  fs.writeFileSync(log, '');
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'static-server.mjs'), root, log], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { url: string }).url);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`the static server exited (${code ?? signal}) before listening`)));
  });
  return {
    url,
    requests: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean),
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
