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

/** A gzipped tar: 4 GiB of zeros in package/zeros.bin, then package/package.json. */
async function bomb(): Promise<Buffer> {
  const big = 4 * 1024 * 1024 * 1024;
  const zero = Buffer.alloc(16 * 1024 * 1024);
  const gz = zlib.createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => gz.on('end', resolve));
  const write = async (b: Buffer): Promise<void> => {
    if (!gz.write(b)) await new Promise((resolve) => gz.once('drain', resolve));
  };
  await write(header('package/zeros.bin', big));
  for (let i = 0; i < big / zero.length; i++) await write(zero);
  const pj = Buffer.from(JSON.stringify({ name: 'bomb', version: '1.0.0', bin: 'x.js' }));
  await write(header('package/package.json', pj.length));
  await write(Buffer.concat([pj, Buffer.alloc(512 - pj.length), Buffer.alloc(1024)]));
  gz.end();
  await done;
  return Buffer.concat(out);
}

beforeAll(async () => {
  dir = tempDir('warden-attack4-bomb-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  reg.publish('bomb', '1.0.0', { tarball: await bomb(), attestations: 'none', packumentManifest: { name: 'bomb', version: '1.0.0' } });
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
