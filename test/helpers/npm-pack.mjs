// npm package tarballs for tests, dependency-free: `pack` lays a package directory out the way `npm pack` does
// (a gzipped ustar archive of `package/…`, a pax header for names longer than ustar holds, the fixed mtime npm
// uses, no node_modules or .git of its own, no symlinks), deterministically: the same files give the same bytes,
// so a tarball's sha512 (what an attestation names) can be computed before and after serving it. `packageJsonOf`
// reads the package.json back out of a tarball (npm's or this module's), as a registry builds its packument.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const NPM_MTIME = 499162500; // 1985-10-26T08:15:00Z, the fixed mtime npm pack writes

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
  h.write(octal(NPM_MTIME, 12), 136);
  h.write('        ', 148); // the checksum field counts as spaces while summing
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
export function packageFiles(dir, rel = '') {
  const out = [];
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (!rel && (name === 'node_modules' || name === '.git')) continue;
    const st = fs.lstatSync(path.join(dir, r));
    if (st.isDirectory()) out.push(...packageFiles(dir, r));
    else if (st.isFile()) out.push({ rel: r, mode: st.mode & 0o111 ? 0o755 : 0o644 });
  }
  return out;
}

/**
 * A gzipped tarball of `files` ([{rel, data, mode?}], laid out under `package/` in the order given).
 * @param {{rel: string, data: Buffer | string, mode?: number}[]} files
 * @returns {Buffer}
 */
export function tarball(files) {
  const blocks = [];
  for (const f of files) blocks.push(...entry(`package/${f.rel}`, Buffer.from(f.data), f.mode ?? 0o644));
  blocks.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(blocks), { level: 1 });
}

/**
 * Packs a package directory as `npm pack` would. `replace` maps paths relative to the package to other contents
 * (a file added or changed in the tarball only, e.g. a swapped build; the directory is not touched).
 * @param {string} dir
 * @param {{replace?: Record<string, Buffer | string>}} [options]
 * @returns {Buffer}
 */
export function pack(dir, options = {}) {
  const replace = { ...options.replace };
  const files = packageFiles(dir).map((f) => {
    const data = Object.hasOwn(replace, f.rel) ? replace[f.rel] : fs.readFileSync(path.join(dir, f.rel));
    delete replace[f.rel];
    return { ...f, data };
  });
  for (const [rel, data] of Object.entries(replace)) files.push({ rel, data, mode: 0o644 });
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return tarball(files);
}

/** The value of a NUL-padded header field. */
function field(h, at, len) {
  const raw = h.subarray(at, at + len);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? len : nul).toString('utf8');
}

/**
 * The entries of a gzipped ustar archive: [{name, type, data}] (pax `path` records and GNU long names applied).
 * Throws a RangeError, having inflated no more, when the archive unpacks to more than `maxUnpacked` bytes.
 * @param {Buffer} tgz
 * @param {number} [maxUnpacked]
 */
export function entries(tgz, maxUnpacked) {
  const tar = zlib.gunzipSync(tgz, maxUnpacked === undefined ? {} : { maxOutputLength: maxUnpacked });
  const out = [];
  let longName;
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(field(h, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(h[156] || 0x30);
    const data = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'));
      if (m) longName = m[1];
      continue;
    }
    if (type === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === 'g') continue;
    const prefix = field(h, 257, 6) === 'ustar' ? field(h, 345, 155) : '';
    const name = longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    longName = undefined;
    out.push({ name, type, data });
  }
  return out;
}

/**
 * The package.json of a package tarball (the one at the top, under whatever first path component it uses). A
 * tarball that unpacks to more than 64 MiB (the fixtures unpack to kilobytes; a test's decompression bomb to
 * gigabytes) throws after inflating that much, as a registry bounds what it reads of a publish.
 * @param {Buffer} tgz
 * @returns {Record<string, unknown>}
 */
export function packageJsonOf(tgz) {
  const found = entries(tgz, 64 * 1024 * 1024).find((e) => e.type === '0' && /^[^/]+\/package\.json$/.test(e.name));
  if (!found) throw new Error('the tarball holds no package.json at its top');
  return JSON.parse(found.data.toString('utf8'));
}
