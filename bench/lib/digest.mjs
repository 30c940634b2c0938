// Digest throughput, mcp-warden's digestFileAsync (dist/attest/digest.js) against `openssl dgst -sha256`, both
// timed as whole processes from outside, with each side's process start (and, for node, importing the digest
// module) measured on an empty file and subtracted.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './setup.mjs';

const timed = (cmd, args) => {
  const t = process.hrtime.bigint();
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  return Number(process.hrtime.bigint() - t) / 1e6;
};

/** Makes a file of `mib` MiB of random bytes in `dir`; returns its path. */
export function bigFile(dir, mib) {
  const file = path.join(dir, 'big.bin');
  const fd = fs.openSync(file, 'w');
  try {
    execFileSync('head', ['-c', String(mib * 1024 * 1024), '/dev/urandom'], { stdio: ['ignore', fd, 'inherit'] });
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/** Best of `runs` per side and file, interleaved. */
export function digestThroughput(dir, file, { runs = 3 } = {}) {
  const empty = path.join(dir, 'empty.bin');
  fs.writeFileSync(empty, '');
  const bytes = fs.statSync(file).size;
  const script = (f) => [
    '--input-type=module',
    '-e',
    `import { digestFileAsync } from ${JSON.stringify(path.join(ROOT, 'dist/attest/digest.js'))}; await digestFileAsync(${JSON.stringify(f)});`,
  ];
  const sides = { warden: (f) => timed(process.execPath, script(f)), openssl: (f) => timed('openssl', ['dgst', '-sha256', f]) };
  const t = { warden: { empty: [], big: [] }, openssl: { empty: [], big: [] } };
  for (const f of Object.values(sides)) f(file); // page cache
  for (let i = 0; i < runs; i++) {
    for (const [n, f] of Object.entries(sides)) {
      t[n].empty.push(f(empty));
      t[n].big.push(f(file));
    }
  }
  const out = { bytes, runs };
  for (const n of Object.keys(sides)) {
    const startMs = Math.min(...t[n].empty);
    const wholeMs = Math.min(...t[n].big);
    out[n] = { startMs, wholeMs, mbps: bytes / 1e6 / ((wholeMs - startMs) / 1000), wholeMbps: bytes / 1e6 / (wholeMs / 1000) };
  }
  return out;
}
