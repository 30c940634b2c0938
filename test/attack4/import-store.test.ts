import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { cli, tempDir, WARDEN } from '../helpers/warden.js';
import { variant } from './common.js';

// `import --install` puts each npx package into the sealed store before it asks (on a terminal) whether to trust
// them, and names the entries in servers.json only after the yes. Two things the store must survive meanwhile:
// `store gc` (run by hand or by a timer) must not remove an entry the import is about to name, and a "no" must
// leave the store as it was, as the import says ("Nothing was enrolled"). The terminal is a real pty (script(1)).
// What each package stands for:
//   - demo-server 1.0.0 and 1.1.0: genuine releases (signed by the test sigstore instance the home trusts);
//     1.0.0 was installed, then upgraded to 1.1.0 long ago, so its entry is unreferenced and old, and an import
//     of a client still pinned to 1.0.0 reuses it.
//   - demo-server 1.0.9: another genuine release, in no store yet.

const T = 240_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;

beforeAll(async () => {
  dir = tempDir('warden-attack4-import-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`install failed (${r.code}): ${r.stderr}`);
  reg.publish(DEMO_SERVER, '1.1.0');
  const u = cli(home, ['upgrade', 'demo-server', '--yes'], { env: reg.env });
  if (u.code !== 0) throw new Error(`upgrade failed (${u.code}): ${u.stderr}${u.stdout}`);
  reg.publish(DEMO_SERVER, '1.0.9', { tarball: variant(DEMO_SERVER, '1.0.0', { version: '1.0.9' }) });
}, T);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

const storeEntries = (): string[] => fs.readdirSync(path.join(home, 'store')).filter((n) => !n.startsWith('.')).sort();
const servers = (): Record<string, { package?: { store: string } }> => JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers;

/** Makes a sealed entry look installed `hoursAgo` hours ago (its install.json's verifiedAt), resealing it. */
function age(entry: string, hoursAgo: number): void {
  const d = path.join(home, 'store', entry);
  const file = path.join(d, 'install.json');
  fs.chmodSync(d, 0o700);
  fs.chmodSync(file, 0o600);
  const record = JSON.parse(fs.readFileSync(file, 'utf8'));
  record.verifiedAt = new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
  fs.writeFileSync(file, JSON.stringify(record, null, 2));
  fs.chmodSync(file, 0o444);
  fs.chmodSync(d, 0o555);
}

/** Runs `import --install FILE` on a pty; when it asks, calls `meanwhile`, then answers `answer`. */
function importOnTerminal(file: string, answer: string, meanwhile: () => void): Promise<{ code: number | null; out: string }> {
  const command = [process.execPath, WARDEN, '--home', home, 'import', '--install', file].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...reg.env, TERM: 'dumb' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let asked = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`import did not finish:\n${out}`));
    }, 200_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!asked && /\[y\/N\] $/.test(out)) {
        asked = true;
        try {
          meanwhile();
        } finally {
          child.stdin.write(`${answer}\n`);
        }
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

function clientConfig(name: string, spec: string): string {
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ mcpServers: { [name]: { command: 'npx', args: ['-y', spec] } } }, null, 2) + '\n');
  return file;
}

describe('import --install and the store', () => {
  it('store gc run while the import waits for its yes does not remove the (reused) entry the import then names', async () => {
    const old = storeEntries().find((n) => n.includes('@1.0.0-')) as string;
    expect(old).toBeDefined();
    age(old, 2); // upgraded away from long ago: unreferenced, and older than gc's hour
    const file = clientConfig('tickets', `${DEMO_SERVER}@1.0.0`);
    let gc = '';
    const r = await importOnTerminal(file, 'y', () => {
      const g = cli(home, ['store', 'gc']); // a timer's gc, while the import waits at its prompt
      gc = g.stdout + g.stderr;
    });
    const named = servers().tickets?.package?.store;
    if (named !== undefined) {
      expect(fs.existsSync(path.join(home, 'store', named)), `servers.json names a store entry gc removed meanwhile:\n${gc}\n${r.out}`).toBe(true);
    } else {
      expect(r.code).not.toBe(0); // refused instead: acceptable
    }
  }, T);

  it('answering no leaves the store as it was', async () => {
    const before = storeEntries();
    const file = clientConfig('declined', `${DEMO_SERVER}@1.0.9`);
    const r = await importOnTerminal(file, 'n', () => {});
    expect(r.out).toContain('Nothing was enrolled and the file was not changed.');
    expect(storeEntries(), 'the import said nothing was enrolled, but left a store entry made for it').toEqual(before);
  }, T);
});
