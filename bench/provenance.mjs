// What provenance costs (issue 12), side by side with its baseline in one run:
//   1. verifying one package's npm attestations (SLSA provenance + publish attestation), offline, against the
//      shipped trust root, with the real gundam-visor fixture: median and p95 of N verifications;
//   2. a 100-dependency tree: the same verification 100 times over (what `install` spends on crypto when every
//      dependency has provenance), beside `openssl dgst -sha512` of the same 100 tarballs for scale;
//   3. installing a real tree: plain `npm install --ignore-scripts` of server-everything (its dependency tree)
//      from the loopback registry stand-in, beside `mcp-warden install --allow-unsigned --dry-run` (resolve,
//      fetch, verify, dependency provenance lookups) and `mcp-warden install --allow-unsigned` (that, plus the
//      sealed store, tree digest and the enrollment launches that lock the surface and record canaries).
//
//   node bench/provenance.mjs [--runs N] [--installs N]
// Needs a build (npm run build). Writes bench/out/provenance.json and prints a Markdown table.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARDEN = path.join(ROOT, 'dist/cli/main.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/sigstore/npm-provenance');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('runs', 200);
const INSTALLS = arg('installs', 3);
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x) => `${x.toFixed(1)} ms`;

const { openTrustRoot } = await import(path.join(ROOT, 'dist/provenance/trust-root.js'));
const { SHIPPED_TRUST_ROOT } = await import(path.join(ROOT, 'dist/provenance/shipped-root.js'));
const { verifyNpmAttestations, sha512Of } = await import(path.join(ROOT, 'dist/provenance/npm-attestations.js'));

const tgz = fs.readFileSync(path.join(FIXTURES, 'gundam-visor-cli-v1-tag.tgz'));
const doc = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'gundam-visor-cli-v1-tag.tgz.json'), 'utf8'));
const subject = { name: 'gundam-visor', version: '1.0.1', sha512hex: sha512Of(tgz).hex };

let t0 = performance.now();
const root = openTrustRoot(SHIPPED_TRUST_ROOT, 'shipped');
const rootMs = performance.now() - t0;
t0 = performance.now();
verifyNpmAttestations(doc, subject, root);
const firstMs = performance.now() - t0;
const per = [];
for (let i = 0; i < RUNS; i++) {
  t0 = performance.now();
  verifyNpmAttestations(doc, subject, root);
  per.push(performance.now() - t0);
}
t0 = performance.now();
for (let i = 0; i < 100; i++) verifyNpmAttestations(doc, subject, root);
const hundredMs = performance.now() - t0;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-warden-bench-prov-'));
const tarballs = Array.from({ length: 100 }, (_, i) => {
  const f = path.join(scratch, `t${i}.tgz`);
  fs.writeFileSync(f, tgz);
  return f;
});
t0 = performance.now();
execFileSync('openssl', ['dgst', '-sha512', ...tarballs], { stdio: 'ignore' });
const opensslMs = performance.now() - t0;

// ---- installing a real tree from the loopback registry ----
const registry = spawn(process.execPath, [path.join(ROOT, 'test/helpers/registry-server.mjs'), path.join(ROOT, 'node_modules')], { stdio: ['pipe', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let out = '';
  registry.stdout.on('data', (d) => {
    out += d;
    if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))).url);
  });
});
const npmrc = path.join(scratch, 'npmrc');
fs.writeFileSync(npmrc, '');
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k))),
  npm_config_registry: `${url}/`,
  npm_config_userconfig: npmrc,
  npm_config_cache: path.join(scratch, 'npm-cache'),
  npm_config_update_notifier: 'false',
};
const SPEC = '@modelcontextprotocol/server-everything@2026.8.31';
const timed = (cmd, args, cwd) => {
  const t = performance.now();
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
  return { ms: performance.now() - t, stdout: r.stdout };
};
// One warm-up install fills npm's cache, so every measured run reads tarballs from the same warm cache.
const warm = fs.mkdtempSync(path.join(scratch, 'warm-'));
timed('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', SPEC], warm);
const rows = { npm: [], dryRun: [], install: [] };
let deps = 0;
for (let i = 0; i < INSTALLS; i++) {
  const dir = fs.mkdtempSync(path.join(scratch, 'npm-'));
  rows.npm.push(timed('npm', ['install', '--ignore-scripts', '--omit=dev', '--no-audit', '--no-fund', SPEC], dir).ms);
  const home = fs.mkdtempSync(path.join(scratch, 'home-'));
  const dry = timed(process.execPath, [WARDEN, '--home', home, 'install', SPEC, '--allow-unsigned', '--dry-run', '--json', '--', 'stdio']);
  rows.dryRun.push(dry.ms);
  deps = JSON.parse(dry.stdout).dependencies.total;
  rows.install.push(timed(process.execPath, [WARDEN, '--home', home, 'install', SPEC, '--allow-unsigned', '--yes', '--', 'stdio']).ms);
}
registry.stdin.end();
fs.rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
// The store is sealed (no write bits); as a non-root user rmSync cannot empty it: tell, do not fail.
if (fs.existsSync(scratch)) process.stderr.write(`left ${scratch} (sealed store entries: chmod -R u+w, then rm -r)\n`);

const med = (xs) => quantile(xs, 0.5);
const results = {
  node: process.version,
  cpus: os.cpus().length,
  verify: { trustRootMs: rootMs, firstMs, medianMs: med(per), p95Ms: quantile(per, 0.95), runs: RUNS, hundredMs, openssl100Ms: opensslMs },
  install: { spec: SPEC, dependencies: deps, runs: INSTALLS, npmMs: med(rows.npm), dryRunMs: med(rows.dryRun), installMs: med(rows.install) },
};
fs.mkdirSync(path.join(ROOT, 'bench/out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench/out/provenance.json'), JSON.stringify(results, null, 2) + '\n');
console.log(`| measure | baseline | mcp-warden |
|---|---|---|
| open the shipped trust root (once per process) | | ${ms(rootMs)} |
| verify one package's attestations, first in the process | | ${ms(firstMs)} |
| verify one package's attestations (median / p95 of ${RUNS}) | | ${ms(med(per))} / ${ms(quantile(per, 0.95))} |
| 100 packages: verify all attestations | openssl dgst -sha512 of the 100 tarballs: ${ms(opensslMs)} | ${ms(hundredMs)} |
| ${SPEC} (${deps} dependencies), median of ${INSTALLS} | npm install --ignore-scripts: ${ms(med(rows.npm))} | install --dry-run: ${ms(med(rows.dryRun))}; install (store + enrollment): ${ms(med(rows.install))} |`);
