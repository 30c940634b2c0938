// A stand-in for the npm registry on loopback, so that tests which install packages need no network.
//
//   node registry-server.mjs NODE_MODULES_DIR [REQUEST_LOG]
//
// It speaks the part of the registry protocol npm uses to install: `GET /<name>` (`/@scope%2fname`) answers the
// packument (`name`, `dist-tags.latest`, `versions[v]` = the package.json with `_id` and `dist: {tarball,
// integrity (sha512), shasum (sha1)}`), and `GET /<name>/-/<file>.tgz` the tarball; anything else is a 404, as
// the registry answers an unknown name. What it serves is every package (every version) found in
// NODE_MODULES_DIR, nested node_modules included, packed on first request the way `npm pack` lays a tarball out
// (a gzipped ustar archive of `package/…`, without the package's own node_modules). No attestations: this
// registry signs nothing.
//
// It prints `{"url": "http://127.0.0.1:PORT", "packages": N}` on stdout once listening, appends one line per
// request ("GET /path STATUS", the path percent-decoded) to REQUEST_LOG if given, and exits when its stdin
// closes, so it cannot outlive the test that started it. It runs as a process of its own because tests drive
// the warden with spawnSync, which would block a server living in the test's own event loop.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';

const [root, requestLog] = process.argv.slice(2);
if (!root) {
  process.stderr.write('usage: registry-server.mjs NODE_MODULES_DIR [REQUEST_LOG]\n');
  process.exit(2);
}

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

// ---- tar (ustar, with a pax header for names longer than ustar can hold) ----

function octal(n, width) {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name, size, mode, type) {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(499162500, 12), 136); // 1985-10-26, the fixed mtime npm pack uses
  h.write('        ', 148); // checksum field counts as spaces while summing
  h.write(type, 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148);
  return h;
}

function pad(buf) {
  const rest = buf.length % 512;
  return rest === 0 ? [buf] : [buf, Buffer.alloc(512 - rest)];
}

function entry(name, data, mode) {
  const blocks = [];
  if (Buffer.byteLength(name) > 100) {
    // pax extended header: "LEN path=NAME\n", LEN counting itself
    const body = ` path=${name}\n`;
    let len = Buffer.byteLength(body);
    while (len !== Buffer.byteLength(body) + String(len).length) len = Buffer.byteLength(body) + String(len).length;
    const record = Buffer.from(`${len}${body}`);
    blocks.push(header('PaxHeader', record.length, 0o644, 'x'), ...pad(record));
  }
  blocks.push(header(name.slice(0, 100), data.length, mode, '0'), ...pad(data));
  return blocks;
}

/** The files of a package directory as npm pack would include them (no node_modules of its own, no symlinks). */
function files(dir, rel = '') {
  const out = [];
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (!rel && (name === 'node_modules' || name === '.git')) continue;
    const st = fs.lstatSync(path.join(dir, r));
    if (st.isDirectory()) out.push(...files(dir, r));
    else if (st.isFile()) out.push({ rel: r, mode: st.mode & 0o111 ? 0o755 : 0o644 });
  }
  return out;
}

function pack(dir) {
  const blocks = [];
  for (const f of files(dir)) blocks.push(...entry(`package/${f.rel}`, fs.readFileSync(path.join(dir, f.rel)), f.mode));
  blocks.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(blocks), { level: 1 });
}

// ---- the registry ----

const packages = index(root);
const tarballs = new Map(); // url path -> bytes
const packuments = new Map(); // name -> JSON text
let base = '';

function packument(name) {
  const cached = packuments.get(name);
  if (cached) return cached;
  const list = packages.get(name);
  if (!list) return undefined;
  const versions = {};
  const file = name.split('/').pop();
  for (const { version, dir, manifest } of list) {
    const tgz = pack(dir);
    const tarPath = `/${name}/-/${file}-${version}.tgz`;
    tarballs.set(tarPath, tgz);
    const clean = Object.fromEntries(Object.entries(manifest).filter(([k]) => !k.startsWith('_')));
    versions[version] = {
      ...clean,
      _id: `${name}@${version}`,
      dist: {
        tarball: `${base}${tarPath}`,
        integrity: `sha512-${crypto.createHash('sha512').update(tgz).digest('base64')}`,
        shasum: crypto.createHash('sha1').update(tgz).digest('hex'),
      },
    };
  }
  const sorted = Object.keys(versions).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const text = JSON.stringify({ _id: name, name, 'dist-tags': { latest: sorted.at(-1) }, versions });
  packuments.set(name, text);
  return text;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  let status = 404;
  let body = Buffer.from('{"error":"Not found"}');
  let type = 'application/json';
  try {
    const tgz = tarballs.get(decodeURIComponent(url.pathname));
    if (req.method === 'GET' && tgz) {
      [status, body, type] = [200, tgz, 'application/octet-stream'];
    } else if (req.method === 'GET' && !url.pathname.includes('/-/')) {
      const text = packument(decodeURIComponent(url.pathname.slice(1)));
      if (text) [status, body] = [200, Buffer.from(text)];
    }
  } catch (err) {
    [status, body] = [500, Buffer.from(JSON.stringify({ error: String(err) }))];
  }
  if (requestLog) fs.appendFileSync(requestLog, `${req.method} ${decodeURIComponent(url.pathname)} ${status}\n`);
  res.writeHead(status, { 'content-type': type, 'content-length': body.length });
  res.end(body);
});

server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(JSON.stringify({ url: base, packages: packages.size }) + '\n');
});
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.exit(0));
