// A stand-in for the npm registry on loopback, so that tests which install packages need no network.
//
//   node registry-server.mjs NODE_MODULES_DIR [REQUEST_LOG] [--catalog CATALOG_JSON]
//
// It speaks the part of the registry protocol npm and mcp-warden use: `GET /<name>` (`/@scope%2fname`) answers
// the packument (`name`, `dist-tags`, `versions[v]` = the package.json with `_id` and `dist: {tarball, integrity
// (sha512), shasum (sha1)[, attestations]}`), `GET /<name>/-/<file>-<version>.tgz` the tarball, and
// `GET /-/npm/v1/attestations/<name>@<version>` (a scoped name percent-encoded: `@scope%2fname@1.0.0`) the
// attestations `{"attestations": [...]}` of a version whose packument names them; anything else is a 404, as the
// registry answers an unknown name. The packument is sent whatever the Accept header asks (npm's
// `application/vnd.npm.install-v1+json` included): the full document is a valid answer to both.
//
// What it serves:
//   - every package (every version) found in NODE_MODULES_DIR, nested node_modules included, packed on first
//     request by npm-pack.mjs; these have no attestations;
//   - the packages of CATALOG_JSON, which win over node_modules ones of the same name. The catalog is read again
//     on every request, so a test "publishes" by rewriting it. Its shape (relative paths are relative to it):
//       { "<name>": { "dist-tags"?: {"latest": "1.0.0"},        // default: latest = the highest version
//                     "versions": { "<version>": {
//                       "tarball": "file.tgz",                    // the package; its package.json is the manifest
//                       "attestations"?: "file.json",            // served, and named in dist.attestations
//                       "integrity"?: "sha512-…",                 // dist.integrity (default: that of `tarball`)
//                       "serveTarball"?: "other.tgz",             // bytes served instead of `tarball` (a swap)
//                       "manifest"?: {…},                         // fields laid over the tarball's package.json in the
//                                                                 // packument (a registry whose copy differs: manifest confusion)
//                       "npmTarball"?: "git+file:///…"            // dist.tarball in the packument sent to npm only (a
//                                                                 // request whose User-Agent starts with "npm/"); the
//                                                                 // warden's own fetches get the genuine one

//                     } } } }
//
// It prints `{"url": "http://127.0.0.1:PORT", "packages": N}` on stdout once listening (N: the node_modules
// packages), appends one line per request ("GET /path STATUS", the path percent-decoded) to REQUEST_LOG if
// given, and exits when its stdin closes, so it cannot outlive the test that started it. It runs as a process of
// its own because tests drive the warden with spawnSync, which would block a server living in the test's own
// event loop.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pack, packageJsonOf } from './npm-pack.mjs';

const argv = process.argv.slice(2);
const catalogAt = argv.indexOf('--catalog');
const catalogFile = catalogAt >= 0 ? argv.splice(catalogAt, 2)[1] : undefined;
const [root, requestLog] = argv;
if (!root || (catalogAt >= 0 && !catalogFile)) {
  process.stderr.write('usage: registry-server.mjs NODE_MODULES_DIR [REQUEST_LOG] [--catalog CATALOG_JSON]\n');
  process.exit(2);
}

const SLSA_PROVENANCE_V1 = 'https://slsa.dev/provenance/v1';
const ATTESTATIONS = '/-/npm/v1/attestations/';

/** name -> [{version, dir}] for every package under a node_modules directory, nested ones included. */
function index(dir, into = new Map()) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return into;
  }
  for (const entry of names) {
    if (entry.startsWith('.')) continue;
    const dirs = entry.startsWith('@') ? fs.readdirSync(path.join(dir, entry)).map((n) => path.join(dir, entry, n)) : [path.join(dir, entry)];
    for (const pkgDir of dirs) {
      let manifest;
      try {
        manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      if (typeof manifest.name === 'string' && typeof manifest.version === 'string') {
        const list = into.get(manifest.name) ?? [];
        if (!list.some((p) => p.version === manifest.version)) list.push({ version: manifest.version, dir: pkgDir, manifest });
        into.set(manifest.name, list);
      }
      index(path.join(pkgDir, 'node_modules'), into);
    }
  }
  return into;
}

const sha512 = (bytes) => `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`;
const sha1 = (bytes) => crypto.createHash('sha1').update(bytes).digest('hex');
const byVersion = (a, b) => a.localeCompare(b, 'en', { numeric: true });
const tarballPath = (name, version) => `/${name}/-/${name.split('/').pop()}-${version}.tgz`;

/** A version's document: its manifest without npm's underscore fields, with `_id` and `dist`. */
function versionDoc(name, version, manifest, dist) {
  const clean = Object.fromEntries(Object.entries(manifest).filter(([k]) => !k.startsWith('_')));
  return { ...clean, _id: `${name}@${version}`, dist };
}

function packumentText(name, versions, tags) {
  const latest = Object.keys(versions).sort(byVersion).at(-1);
  return JSON.stringify({ _id: name, name, 'dist-tags': { ...(latest ? { latest } : {}), ...tags }, versions });
}

// ---- the catalog: read again on every request ----

function readCatalog() {
  if (!catalogFile) return {};
  const catalog = JSON.parse(fs.readFileSync(catalogFile, 'utf8'));
  const dir = path.dirname(catalogFile);
  const file = (p) => (p === undefined ? undefined : path.resolve(dir, p));
  for (const pkg of Object.values(catalog)) {
    for (const v of Object.values(pkg.versions ?? {})) Object.assign(v, { tarball: file(v.tarball), attestations: file(v.attestations), serveTarball: file(v.serveTarball) });
  }
  return catalog;
}

function catalogPackument(name, pkg, fromNpm) {
  const versions = {};
  for (const [version, v] of Object.entries(pkg.versions ?? {})) {
    const tgz = fs.readFileSync(v.tarball);
    const dist = {
      tarball: fromNpm && v.npmTarball ? v.npmTarball : `${base}${tarballPath(name, version)}`,
      integrity: v.integrity ?? sha512(tgz),
      shasum: sha1(tgz),
      ...(v.attestations ? { attestations: { url: `${base}${ATTESTATIONS}${name.replace('/', '%2f')}@${version}`, provenance: { predicateType: SLSA_PROVENANCE_V1 } } } : {}),
    };
    let own = {};
    try {
      own = packageJsonOf(tgz);
    } catch (err) {
      if (!v.manifest) throw err; // a tarball it cannot read (a test's hostile one) needs its manifest given
    }
    versions[version] = versionDoc(name, version, { ...own, ...(v.manifest ?? {}) }, dist);
  }
  return packumentText(name, versions, pkg['dist-tags'] ?? {});
}

/** The version of the catalog a tarball or attestations path names. */
function catalogVersion(catalog, name, version) {
  return Object.hasOwn(catalog, name) ? catalog[name].versions?.[version] : undefined;
}

// ---- node_modules packages: packed once ----

const packages = index(root);
const tarballs = new Map(); // url path -> bytes
const packuments = new Map(); // name -> JSON text
let base = '';

function modulesPackument(name) {
  const cached = packuments.get(name);
  if (cached) return cached;
  const list = packages.get(name);
  if (!list) return undefined;
  const versions = {};
  for (const { version, dir, manifest } of list) {
    const tgz = pack(dir);
    tarballs.set(tarballPath(name, version), tgz);
    versions[version] = versionDoc(name, version, manifest, { tarball: `${base}${tarballPath(name, version)}`, integrity: sha512(tgz), shasum: sha1(tgz) });
  }
  const text = packumentText(name, versions, {});
  packuments.set(name, text);
  return text;
}

/** [status, body, content type] for a GET of `pathname` (percent-decoded). */
function answer(pathname, fromNpm) {
  const catalog = readCatalog();
  if (pathname.startsWith(ATTESTATIONS)) {
    const spec = pathname.slice(ATTESTATIONS.length);
    const at = spec.lastIndexOf('@');
    const v = at > 0 ? catalogVersion(catalog, spec.slice(0, at), spec.slice(at + 1)) : undefined;
    return v?.attestations ? [200, fs.readFileSync(v.attestations), 'application/json'] : undefined;
  }
  const tar = /^\/((?:@[^/]+\/)?[^/]+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(pathname);
  if (tar) {
    const [, name, version] = tar;
    if (Object.hasOwn(catalog, name)) {
      const v = catalogVersion(catalog, name, version);
      return v && tarballPath(name, version) === pathname ? [200, fs.readFileSync(v.serveTarball ?? v.tarball), 'application/octet-stream'] : undefined;
    }
    const tgz = tarballs.get(pathname);
    return tgz ? [200, tgz, 'application/octet-stream'] : undefined;
  }
  if (pathname.includes('/-/')) return undefined;
  const name = pathname.slice(1);
  const text = Object.hasOwn(catalog, name) ? catalogPackument(name, catalog[name], fromNpm) : modulesPackument(name);
  return text ? [200, Buffer.from(text), 'application/json'] : undefined;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  let status = 404;
  let body = Buffer.from('{"error":"Not found"}');
  let type = 'application/json';
  let pathname = url.pathname;
  try {
    pathname = decodeURIComponent(url.pathname);
    const found = req.method === 'GET' ? answer(pathname, /^npm\//.test(req.headers['user-agent'] ?? '')) : undefined;
    if (found) [status, body, type] = found;
  } catch (err) {
    [status, body] = [500, Buffer.from(JSON.stringify({ error: String(err) }))];
  }
  if (requestLog) fs.appendFileSync(requestLog, `${req.method} ${pathname} ${status}\n`);
  // no-cache: npm revalidates every time, so a version published mid-test is seen at once.
  res.writeHead(status, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' });
  res.end(body);
});

server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(JSON.stringify({ url: base, packages: packages.size }) + '\n');
});
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.exit(0));
