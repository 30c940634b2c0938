import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, perTestDirs } from '../helpers/warden.js';

// `mcp-warden doctor` on this host, where pretest installed bubblewrap: real probes (a few short bwrap runs), no
// home needed. And a home whose trusted path has no bwrap: every confined level refused with the launch's code.

const dirs = perTestDirs();

interface Report {
  version: number;
  ok: boolean;
  pathFrom: string;
  trustedPath: string;
  engine: { file?: string; version?: string; code?: string };
  nsenter: { file?: string; code?: string };
  observation: Record<string, unknown>;
  userNamespaces: Record<string, unknown>;
  landlock: boolean | null;
  probes: Record<string, { ok: boolean; detail?: string } | null>;
  decoys: { placed: boolean; paths: string[]; why?: string };
  writes: { observed: boolean; bpftrace: string | null; why?: string };
  levels: { level: string; confines: string; doesNot: string; ok: boolean; code?: string; fix?: string }[];
}

describe('doctor', () => {
  it('applies every level on this host: each probe passes, exit 0, the documented --json shape, no home made', () => {
    const r = cli(dirs.home, ['doctor', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(Object.keys(report).sort()).toEqual(['decoys', 'engine', 'landlock', 'levels', 'nsenter', 'observation', 'ok', 'pathFrom', 'probes', 'trustedPath', 'uid', 'userNamespaces', 'version', 'writes'].sort());
    expect(report).toMatchObject({ version: 1, ok: true, pathFrom: 'default', trustedPath: '/usr/local/bin:/usr/bin:/bin' });
    expect(report.engine.file).toMatch(/\/bwrap$/);
    expect(report.engine.version).toMatch(/^bubblewrap \d/);
    expect(report.nsenter.file).toMatch(/\/nsenter$/);
    expect(Object.keys(report.observation).sort()).toEqual(['mount', 'overlayfs', 'sh', 'umount', 'unshare']);
    expect(Object.keys(report.userNamespaces).sort()).toEqual(['apparmorRestricted', 'max', 'unprivilegedClone']);
    for (const p of ['network', 'files', 'domains']) expect(report.probes[p]).toEqual({ ok: true });
    expect(report.levels.map((l) => [l.level, l.ok, l.code])).toEqual([['none', true, undefined], ['loopback', true, undefined], ['domains', true, undefined], ['any', true, undefined], ['no sandbox', true, undefined]]);
    for (const l of report.levels) expect(l.confines.length * l.doesNot.length).toBeGreaterThan(0);
    expect(report.decoys).toEqual({ placed: true, paths: ['~/.ssh/id_rsa', '~/.ssh/id_ed25519', '~/.ssh/id_ecdsa', '~/.aws/credentials', '~/.config/gcloud/application_default_credentials.json', '~/.config/gh/hosts.yml', '~/.docker/config.json', '~/.kube/config', '~/.netrc', '~/.git-credentials'] });
    expect(report.writes).toEqual({ observed: true, bpftrace: '/usr/bin/bpftrace' }); // it attached once here
    expect(fs.existsSync(dirs.home)).toBe(false);
  });

  it('refuses every confined level with SANDBOX_ENGINE_MISSING and the fix when the trusted path has no bwrap, exit 1', () => {
    const empty = path.join(dirs.dir, 'bin');
    fs.mkdirSync(empty);
    fs.mkdirSync(dirs.home, { mode: 0o700 });
    fs.writeFileSync(path.join(dirs.home, 'servers.json'), JSON.stringify({ version: 1, path: empty, servers: {} }), { mode: 0o600 });
    const r = cli(dirs.home, ['doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`Trusted path (servers.json): ${empty}`);
    for (const level of ['none', 'loopback', 'domains', 'any']) expect(r.stdout).toContain(`${level}: CANNOT BE APPLIED (SANDBOX_ENGINE_MISSING)`);
    expect(r.stdout).toContain('no sandbox: ok');
    expect(r.stdout).toContain(`fix:          bubblewrap (bwrap) is not on the trusted path ${empty}. Install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap`);
    const json = JSON.parse(cli(dirs.home, ['doctor', '--json']).stdout) as Report;
    expect(json.ok).toBe(false);
    expect(json.engine.code).toBe('SANDBOX_ENGINE_MISSING');
    expect(json.probes).toEqual({ network: null, files: null, domains: null, unprivileged: null });
    // Not traced: a node server's module guard reports its denied fs calls instead (docs/adr/0068).
    expect(json.writes).toEqual({ observed: false, bpftrace: null, why: 'bpftrace is not on the trusted path (Debian, Ubuntu: apt-get install bpftrace)', guard: true });
    expect(r.stdout).toContain('node servers: their module guard reports the writes their own fs calls were refused');
    expect(r.stdout).toContain('Writes:      denied writes are NOT observed (the sandbox still refuses them): bpftrace is not on the trusted path');
  });

  it('names a bwrap others may write as untrusted: SANDBOX_UNAVAILABLE with the chown/chmod fix, no probe run with it, exit 1', () => {
    const bin = path.join(dirs.dir, 'bin');
    fs.mkdirSync(bin);
    const planted = path.join(bin, 'bwrap');
    fs.copyFileSync('/usr/bin/bwrap', planted);
    fs.chmodSync(planted, 0o757);
    fs.mkdirSync(dirs.home, { mode: 0o700 });
    fs.writeFileSync(path.join(dirs.home, 'servers.json'), JSON.stringify({ version: 1, path: bin, servers: {} }), { mode: 0o600 });
    const r = cli(dirs.home, ['doctor', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.engine.code).toBe('SANDBOX_UNAVAILABLE');
    expect(report.probes.network).toBeNull();
    const none = report.levels.find((l) => l.level === 'none');
    expect(none).toMatchObject({ ok: false, code: 'SANDBOX_UNAVAILABLE' });
    expect(none?.fix).toContain(`chown root ${planted} && chmod go-w ${planted}`);
  });
});
