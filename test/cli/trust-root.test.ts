import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, auditEvents, cli, perTestDirs } from '../helpers/warden.js';
import { serveDirectory, writeTufRepo } from '../helpers/tuf-repo.js';

// `trust-root show` and `trust-root update`, driven as a user would. The sigstore material is the real one that
// @sigstore/tuf embeds (its seeds: the public-good trusted_root.json and the npm registry's keys.json).

const seeds = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@sigstore/tuf/seeds.json'), 'utf8')) as Record<string, { targets: Record<string, string> }>;
const seed = seeds['https://tuf-repo-cdn.sigstore.dev'] as { targets: Record<string, string> };
const TRUSTED_ROOT = Buffer.from(seed.targets['trusted_root.json'] as string, 'base64');
const NPM_KEYS = Buffer.from(seed.targets['registry.npmjs.org%2Fkeys.json'] as string, 'base64');
const ATTESTATION_KEY = 'SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U';

const tmp = perTestDirs();

interface ShowJson {
  origin: string;
  file: string | null;
  date: string;
  source: string;
  ageDays: number;
  old: boolean;
  authorities: { kind: string; name: string; start: string; end: string | null; state: string }[];
}

const show = (): ShowJson => {
  const r = cli(tmp.home, ['trust-root', 'show', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ShowJson;
};
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const write = (name: string, content: string | Buffer): string => {
  const file = path.join(tmp.dir, name);
  fs.writeFileSync(file, content);
  return file;
};
const stored = (): { date: string; source: string; trustedRoot: unknown; npmKeys: { keys: { keyId: string; keyUsage: string }[] } } =>
  JSON.parse(fs.readFileSync(path.join(tmp.home, 'trust-root.json'), 'utf8'));

/** Every path under the tmp.home with its mode and bytes: "nothing was written" means this did not change. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!fs.existsSync(root)) return out;
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const mode = (fs.lstatSync(p).mode & 0o7777).toString(8);
      if (e.isDirectory()) {
        out[path.relative(root, p) + '/'] = mode;
        walk(p);
      } else out[path.relative(root, p)] = `${mode} ${sha256(fs.readFileSync(p))}`;
    }
  };
  walk(root);
  return out;
}

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('trust-root show', () => {
  it('on a fresh home names the shipped root, its date, and each authority with its window', () => {
    const r = cli(tmp.home, ['trust-root', 'show']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Sigstore trust root: shipped with mcp-warden');
    expect(r.stdout).toMatch(/date\s+2026-03-18T00:00:00Z \(\d+ days ago\)/);
    expect(r.stdout).toMatch(/certificate authority\s+https:\/\/fulcio\.sigstore\.dev\s+2022-04-13T20:06:15Z\s+open\n/);
    expect(r.stdout).toMatch(/certificate authority\s+https:\/\/fulcio\.sigstore\.dev\s+2021-03-07T03:20:29Z\s+2022-12-31T23:59:59\.999Z\s+\(ended\)\n/);
    expect(r.stdout).toMatch(/npm attestation key\s+SHA256:DhQ8wR5APBvFHLF\/\+Tc\+AYvPOdTpcIDqOhxsBHRwC7U\s+2025-01-13T00:00:00\.000Z\s+open\n/);
    expect(fs.existsSync(tmp.home)).toBe(false); // show writes nothing, not even the home

    const j = show();
    expect(j).toMatchObject({ origin: 'shipped', file: null, date: '2026-03-18T00:00:00Z', source: expect.stringContaining('@sigstore/tuf 4.0.2') });
    expect(j.old).toBe(j.ageDays > 180);
    expect(r.stdout.includes('cannot be verified: run `mcp-warden trust-root update`')).toBe(j.old);
    expect(j.authorities).toContainEqual({ kind: 'certificate authority', name: 'https://fulcio.sigstore.dev', start: '2022-04-13T20:06:15Z', end: null, state: 'valid' });
    expect(j.authorities).toContainEqual({ kind: 'certificate authority', name: 'https://fulcio.sigstore.dev', start: '2021-03-07T03:20:29Z', end: '2022-12-31T23:59:59.999Z', state: 'ended' });
    expect(new Set(j.authorities.map((a) => a.kind))).toEqual(new Set(['certificate authority', 'transparency log', 'CT log', 'timestamp authority', 'npm attestation key']));
  });

  it('refuses a trust-root.json that the group can write (FILE_INSECURE), naming the chmod', () => {
    expect(cli(tmp.home, ['trust-root', 'update', '--from', write('trusted_root.json', TRUSTED_ROOT)]).code).toBe(0);
    const file = path.join(tmp.home, 'trust-root.json');
    fs.chmodSync(file, 0o620);
    const r = cli(tmp.home, ['trust-root', 'show']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('FILE_INSECURE');
    expect(r.stderr).toContain(`chmod go-w ${file}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const u = cli(tmp.home, ['trust-root', 'update', '--from', path.join(tmp.dir, 'trusted_root.json')]);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('FILE_INSECURE');
    expect(fs.statSync(file).mode & 0o777).toBe(0o620); // not replaced
  });
});

describe('trust-root update --from FILE (air-gapped)', () => {
  it("a trusted_root.json replaces that half and keeps the npm keys; show names the file and today's date", () => {
    // First a keys.json with only the current attestation key, so that "kept" is visible afterwards.
    const keys = JSON.parse(NPM_KEYS.toString('utf8')) as { keys: { keyId: string }[] };
    const trimmed = Buffer.from(JSON.stringify({ keys: keys.keys.filter((k) => k.keyId === ATTESTATION_KEY) }));
    const keysFile = write('keys.json', trimmed);
    const k = cli(tmp.home, ['trust-root', 'update', '--from', keysFile]);
    expect(k.code, k.stderr).toBe(0);
    expect(k.stdout).toContain('Replaced the npm attestation keys; kept the sigstore trusted root');
    expect(k.stdout).toContain('- npm attestation key SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA');
    expect(stored().npmKeys.keys.map((x) => x.keyId)).toEqual([ATTESTATION_KEY, ATTESTATION_KEY]);

    const before = Date.now();
    const rootFile = write('trusted_root.json', TRUSTED_ROOT);
    const r = cli(tmp.home, ['trust-root', 'update', '--from', rootFile]);
    const after = Date.now();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Replaced the sigstore trusted root; kept the npm attestation keys of the previous root.');
    expect(r.stdout).toMatch(new RegExp(`was  \\S+  file ${keysFile}`));
    expect(r.stdout).toContain(`now  `);

    const j = show();
    expect(j.origin).toBe('home');
    expect(j.file).toBe(path.join(tmp.home, 'trust-root.json'));
    expect(j.source).toBe(`file ${rootFile} (sha256 ${sha256(TRUSTED_ROOT)})`);
    expect(Date.parse(j.date)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(j.date)).toBeLessThanOrEqual(after);
    expect(j.old).toBe(false);
    expect(cli(tmp.home, ['trust-root', 'show']).stdout).not.toContain('trust-root update');
    expect(stored().trustedRoot).toEqual(JSON.parse(TRUSTED_ROOT.toString('utf8')));
    expect(stored().npmKeys).toEqual(JSON.parse(trimmed.toString('utf8'))); // kept from the previous root
    expect(fs.statSync(path.join(tmp.home, 'trust-root.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(tmp.home).mode & 0o777).toBe(0o700);

    const events = auditEvents(tmp.home).filter((e) => e.event === 'trust_root_updated');
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ source: j.source, date: j.date, sha256: sha256(fs.readFileSync(path.join(tmp.home, 'trust-root.json'))), previousSource: expect.stringContaining(keysFile) });
  });

  it('a whole trust root replaces both halves and keeps its own date; an old one is said to be old', () => {
    const whole = { date: '2025-01-02T00:00:00Z', source: 'another machine', trustedRoot: JSON.parse(TRUSTED_ROOT.toString('utf8')), npmKeys: JSON.parse(NPM_KEYS.toString('utf8')) };
    const bytes = Buffer.from(JSON.stringify(whole, null, 2));
    const file = write('trust-root-export.json', bytes);
    const r = cli(tmp.home, ['trust-root', 'update', '--from', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Replaced the whole trust root');
    expect(r.stdout).toContain('Note: this root is dated before the one it replaced');
    const j = show();
    expect(j).toMatchObject({ origin: 'home', date: '2025-01-02T00:00:00Z', source: `file ${file} (sha256 ${sha256(bytes)}), taken from another machine`, old: true });
    const text = cli(tmp.home, ['trust-root', 'show']).stdout;
    expect(text).toContain('sigstore rotates keys; a signature made with a key newer than this root cannot be verified: run `mcp-warden trust-root update`');
  });

  it('a whole trust root replaces a trust-root.json that is not valid; half of one cannot', () => {
    fs.mkdirSync(tmp.home, { mode: 0o700 });
    const file = path.join(tmp.home, 'trust-root.json');
    fs.writeFileSync(file, '{"date": ', { mode: 0o600 });
    const shown = cli(tmp.home, ['trust-root', 'show']);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain(`FILE_NOT_JSON: trust-root.json at ${file} is not valid JSON`);

    const half = cli(tmp.home, ['trust-root', 'update', '--from', write('trusted_root.json', TRUSTED_ROOT)]);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('A trusted_root.json would replace only half of it: replace the whole root instead');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"date": ');

    const whole = { date: new Date().toISOString(), source: 'another machine', trustedRoot: JSON.parse(TRUSTED_ROOT.toString('utf8')), npmKeys: JSON.parse(NPM_KEYS.toString('utf8')) };
    const r = cli(tmp.home, ['trust-root', 'update', '--from', write('whole.json', JSON.stringify(whole))]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('was  an invalid trust-root.json (FILE_NOT_JSON)');
    expect(show().source).toContain('taken from another machine');
    const event = auditEvents(tmp.home).find((e) => e.event === 'trust_root_updated');
    expect(event).toBeDefined();
    expect(event).not.toHaveProperty('previousSource');
  });

  it('refuses a file that is not JSON, has a duplicate key, is a trusted root without tlogs, or is of no known shape: exit 2, nothing written', () => {
    expect(cli(tmp.home, ['trust-root', 'update', '--from', write('good.json', TRUSTED_ROOT)]).code).toBe(0);
    const before = snapshot(tmp.home);
    const noTlogs = JSON.parse(TRUSTED_ROOT.toString('utf8')) as Record<string, unknown>;
    delete noTlogs.tlogs;
    const emptyTlogs = { ...noTlogs, tlogs: [] };
    const badKey = JSON.parse(NPM_KEYS.toString('utf8')) as { keys: { publicKey: { rawBytes: string } }[] };
    (badKey.keys[1] as { publicKey: { rawBytes: string } }).publicKey.rawBytes = Buffer.from('not a key').toString('base64');
    const cases: [string, string, RegExp][] = [
      ['not-json.json', '{"mediaType": ', /is not valid JSON \(.*line 1 column/],
      ['duplicate.json', `{"keys": [], "keys": ${JSON.stringify((JSON.parse(NPM_KEYS.toString('utf8')) as { keys: unknown }).keys)}}`, /is not valid JSON \(duplicate key "keys"/],
      ['no-tlogs.json', JSON.stringify(noTlogs), /missing key 'tlogs' in the sigstore trusted root \S+ at \//],
      ['empty-tlogs.json', JSON.stringify(emptyTlogs), /at \/tlogs: expected at least one transparency log/],
      ['bad-key.json', JSON.stringify(badKey), /has a key node cannot read at \/keys\/1\/publicKey\/rawBytes/],
      ['other.json', '{"hello": "world"}', /is neither a sigstore trusted_root\.json .* nor an npm keys\.json .* nor a trust-root\.json/],
    ];
    for (const [name, content, message] of cases) {
      const file = write(name, content);
      const r = cli(tmp.home, ['trust-root', 'update', '--from', file]);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('TRUST_ROOT_INVALID');
      expect(r.stderr).toContain(file);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain('nothing was written');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(snapshot(tmp.home), name).toEqual(before);
    }
    // On a fresh home too: not even the home is made.
    const fresh = path.join(tmp.dir, 'fresh');
    const r = cli(fresh, ['trust-root', 'update', '--from', path.join(tmp.dir, 'no-tlogs.json')]);
    expect(r.code).toBe(2);
    expect(fs.existsSync(fresh)).toBe(false);
  });
});

describe('trust-root update through TUF', () => {
  it('without network: TRUST_ROOT_UPDATE_FAILED (exit 3) within seconds, no stack, nothing written', async () => {
    const port = await closedPort();
    fs.mkdirSync(tmp.home, { mode: 0o700 });
    fs.writeFileSync(path.join(tmp.home, 'servers.json'), JSON.stringify({ version: 1, servers: {} }), { mode: 0o600 });
    for (const target of [tmp.home, path.join(tmp.dir, 'fresh')]) {
      const before = snapshot(target);
      const started = Date.now();
      const r = cli(target, ['trust-root', 'update', '--mirror', `http://127.0.0.1:${port}`]);
      const took = Date.now() - started;
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain('TRUST_ROOT_UPDATE_FAILED');
      expect(r.stderr).toContain(`could not reach the TUF repository http://127.0.0.1:${port}`);
      expect(r.stderr).toContain('On an air-gapped machine');
      expect(r.stderr).toContain('mcp-warden trust-root update --from FILE');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(took).toBeLessThan(15_000); // three connection attempts, 250 + 500 ms apart
      expect(snapshot(target)).toEqual(before);
    }
    expect(fs.existsSync(path.join(tmp.dir, 'fresh'))).toBe(false);
  });

  describe('from a TUF repository on loopback', () => {
    const past = '2026-01-01T00:00:00Z';
    const future = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

    /** Serves a repository whose root versions expire as given; the client starts from version 1 (seeded in the
     *  TUF cache as @sigstore/tuf lays it out, as if an earlier update had reached it). */
    async function repository(rootExpiries: string[]) {
      const repo = path.join(tmp.dir, 'repo');
      const first = writeTufRepo(repo, { targets: { 'trusted_root.json': TRUSTED_ROOT, 'registry.npmjs.org/keys.json': NPM_KEYS }, rootExpiries });
      const server = await serveDirectory(repo, path.join(tmp.dir, 'requests.log'));
      const cached = path.join(tmp.home, 'cache', 'tuf', encodeURIComponent(new URL(server.url).host));
      fs.mkdirSync(cached, { recursive: true, mode: 0o700 });
      fs.chmodSync(tmp.home, 0o700);
      fs.writeFileSync(path.join(cached, 'root.json'), first, { mode: 0o600 });
      return server;
    }

    it('walks from an expired TUF root to its signed successor and stores the targets it verified', async () => {
      const server = await repository([past, future]);
      try {
        const r = cli(tmp.home, ['trust-root', 'update', '--mirror', server.url]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('Fetched trusted_root.json and registry.npmjs.org/keys.json through TUF.');
        expect(server.requests()).toEqual(expect.arrayContaining(['GET /2.root.json 200', 'GET /3.root.json 404', 'GET /timestamp.json 200', 'GET /targets/trusted_root.json 200', 'GET /targets/registry.npmjs.org/keys.json 200']));
        const j = show();
        expect(j.source).toBe(`TUF repository ${server.url} (TUF root v2)`);
        expect(j.old).toBe(false);
        expect(stored().trustedRoot).toEqual(JSON.parse(TRUSTED_ROOT.toString('utf8')));
        expect(stored().npmKeys).toEqual(JSON.parse(NPM_KEYS.toString('utf8')));
        expect(auditEvents(tmp.home).filter((e) => e.event === 'trust_root_updated')).toEqual([expect.objectContaining({ source: j.source, date: j.date, previousSource: expect.stringContaining('@sigstore/tuf') })]);
      } finally {
        await server.close();
      }
    });

    it('refuses a repository whose newest root has expired (exit 3), writing no trust root', async () => {
      const server = await repository([past]);
      try {
        const r = cli(tmp.home, ['trust-root', 'update', '--mirror', server.url]);
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).toContain('TRUST_ROOT_UPDATE_FAILED');
        expect(r.stderr).toContain('was reached but its metadata did not verify (Final root.json is expired)');
        expect(fs.existsSync(path.join(tmp.home, 'trust-root.json'))).toBe(false);
        expect(auditEvents(tmp.home)).toEqual([]);
      } finally {
        await server.close();
      }
    });
  });
});
