import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { tempDir, WARDEN } from '../helpers/warden.js';

// The warden reads a package's package.json out of its tarball itself, before anything else is decided (even for a
// package it will then refuse as unsigned, and under --dry-run). The tarball is bounded (256 MiB as sent), but what
// it unpacks to is not: a registry or mirror (or any publisher) can serve a small gzip that inflates to gigabytes.
// What the package stands for:
//   - bomb 1.0.0: published without provenance by an attacker; 4 MiB of gzip, a package.json after 4 GiB of zeros.

const T = 180_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;

function header(name: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0);
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(size.toString(8).padStart(11, '0') + '\0', 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return h;
}

/**
 * A gzipped tar: 4 GiB of zeros in package/zeros.bin, then package/package.json. One gzip member whose deflate
 * stream is the tar's header, the same 16 MiB of zeros 256 times and the tail, each compressed on its own and
 * ended by a full flush (byte-aligned, no reference to earlier data), so the zeros are compressed once and their
 * deflate bytes repeated (about the size gzip -9 makes of the whole, 4 MiB), in seconds instead of a minute. Its
 * CRC and length are the real ones: gunzip inflates it whole without error.
 */
function bomb(): Buffer {
  const big = 4 * 1024 * 1024 * 1024;
  const zero = Buffer.alloc(16 * 1024 * 1024);
  const pj = Buffer.from(JSON.stringify({ name: 'bomb', version: '1.0.0', bin: 'x.js' }));
  const head = header('package/zeros.bin', big);
  const tail = Buffer.concat([header('package/package.json', pj.length), pj, Buffer.alloc(512 - pj.length), Buffer.alloc(1024)]);
  const part = { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH };
  const zeros = zlib.deflateRawSync(zero, part);
  let crc = zlib.crc32(head);
  for (let i = 0; i < big / zero.length; i++) crc = zlib.crc32(zero, crc);
  crc = zlib.crc32(tail, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((head.length + big + tail.length) % 2 ** 32, 4); // ISIZE: the length modulo 2^32
  const gzipHeader = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]); // deflate, no name, no time, -9, unix
  return Buffer.concat([gzipHeader, zlib.deflateRawSync(head, part), ...Array<Buffer>(big / zero.length).fill(zeros), zlib.deflateRawSync(tail, { level: 9 }), trailer]);
}

beforeAll(async () => {
  dir = tempDir('warden-attack4-bomb-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  reg.publish('bomb', '1.0.0', { tarball: bomb(), attestations: 'none', packumentManifest: { name: 'bomb', version: '1.0.0' } });
}, T);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe('a tarball that inflates to gigabytes', () => {
  it('is refused with bounded memory (install --dry-run of an unsigned package)', () => {
    const r = spawnSync('/usr/bin/time', ['-f', 'maxrss_kib=%M', process.execPath, WARDEN, '--home', home, 'install', 'bomb@1.0.0', '--dry-run'], { env: reg.env, encoding: 'utf8', timeout: 170_000 });
    const rss = Number(/maxrss_kib=(\d+)/.exec(r.stderr)?.[1] ?? 'NaN');
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^mcp-warden: (INSTALL_FAILED|PROVENANCE_MISSING):/m);
    expect(rss, `peak memory ${Math.round(rss / 1024)} MiB for a 4 MiB answer`).toBeLessThan(512 * 1024);
  }, T);
});
