import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestCache } from '../../src/attest/cache.js';
import { digestPackageTree, type PackageTree } from '../../src/attest/tree.js';
import { ROOT, tempDir } from '../helpers/warden.js';

// The tree digest against a plain reimplementation of docs/adr/0003-package-tree-digest.md (nothing shared with
// src/attest/tree.ts), on a fixture with every kind of entry and on a real installed closure; and the fixture's
// digest pinned, so that neither side can drift with the other. The order of the stat keys is compared too: the
// re-check after launch names the first changed path in that order (src/attest/recheck.ts). A faster walk (one on
// the thread pool was tried, ADR 0020) must pass these unchanged.

function reference(root: string): { sha256: string; keys: Array<[string, string]>; files: number; packages: number; missing: string[] } {
  const keys: Array<[string, string]> = [];
  const key = (p: string): string => {
    const st = fs.lstatSync(p, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  };
  let files = 0;
  const digestDir = (pkg: string): string => {
    const lines: string[] = [];
    const walk = (rel: string): void => {
      const abs = rel ? path.join(pkg, rel) : pkg;
      keys.push([abs, key(abs)]);
      for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
        if (!rel && e.name === 'node_modules') continue;
        files++;
        const r = rel ? `${rel}/${e.name}` : e.name;
        const a = path.join(abs, e.name);
        if (e.isSymbolicLink()) lines.push(`l\0${r}\0${fs.readlinkSync(a)}`);
        else if (e.isDirectory()) {
          lines.push(`d\0${r}`);
          walk(r);
        } else if (e.isFile()) {
          keys.push([a, key(a)]);
          const x = (fs.lstatSync(a).mode & 0o100) !== 0 ? 'x' : '-';
          lines.push(`f\0${r}\0${x}\0${createHash('sha256').update(fs.readFileSync(a)).digest('hex')}`);
        } else lines.push(`o\0${r}`);
      }
    };
    walk('');
    lines.sort((a, b) => (a.slice(2) < b.slice(2) ? -1 : a.slice(2) > b.slice(2) ? 1 : 0));
    return createHash('sha256').update(lines.join('\n')).digest('hex');
  };
  const seen = new Map<string, string>();
  const missing = new Set<string>();
  const queue = [fs.realpathSync(root)];
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    if (seen.has(dir)) continue;
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | string | undefined>;
    const names = (v: unknown): string[] => (v && typeof v === 'object' ? Object.keys(v) : []);
    const optional = new Set([...names(json.optionalDependencies), ...names(json.peerDependencies)]);
    const name = String(json.name ?? path.basename(dir));
    seen.set(dir, `${name}\0${String(json.version ?? '')}\0${digestDir(dir)}`);
    for (const dep of [...new Set([...names(json.dependencies), ...optional])].sort()) {
      let found: string | undefined;
      for (let d = dir; ; d = path.dirname(d)) {
        const candidate = path.join(d, 'node_modules', dep);
        if (path.basename(d) !== 'node_modules' && fs.existsSync(path.join(candidate, 'package.json'))) {
          found = fs.realpathSync(candidate);
          break;
        }
        if (path.dirname(d) === d) break;
      }
      if (found) queue.push(found);
      else if (!optional.has(dep)) missing.add(`${name}>${dep}`);
    }
  }
  const lines = [...seen.values()].sort();
  for (const m of [...missing].sort()) lines.push(`missing\0${m}`);
  return { sha256: createHash('sha256').update(lines.join('\n')).digest('hex'), keys, files, packages: seen.size, missing: [...missing].sort() };
}

const view = (t: PackageTree) => ({ sha256: t.sha256, keys: [...t.keys], files: t.files, packages: t.packages, missing: t.missing });

let dir: string;
let app: string;

/** Every kind of entry: nested and empty directories, a node_modules/ below the top, symlinks (one dangling), an
 *  executable, a FIFO, scoped and nested packages, a package reached twice, a missing and an absent optional
 *  dependency, and a few hundred files. */
function fixture(at: string): void {
  const write = (f: string, text: string, mode = 0o644): void => {
    fs.mkdirSync(path.dirname(path.join(at, f)), { recursive: true });
    fs.writeFileSync(path.join(at, f), text);
    fs.chmodSync(path.join(at, f), mode);
  };
  const pkg = (dirRel: string, json: object): void => write(`${dirRel}/package.json`, JSON.stringify(json));
  pkg('app', { name: 'app', version: '1.0.0', dependencies: { a: '1', '@s/b': '1', ghost: '1' }, optionalDependencies: { maybe: '1' }, peerDependencies: { c: '1' } });
  write('app/bin/run', '#!/bin/sh\n', 0o755);
  write('app/lib/node_modules/kept.js', 'inside, not top-level');
  fs.mkdirSync(path.join(at, 'app/empty/deeper'), { recursive: true });
  for (let d = 0; d < 12; d++) for (let f = 0; f < 25; f++) write(`app/src/d${d}/f${f}.js`, `export const x = ${d * 100 + f};\n`);
  fs.symlinkSync('bin/run', path.join(at, 'app/alias'));
  fs.symlinkSync('nowhere', path.join(at, 'app/dangling'));
  spawnSync('mkfifo', [path.join(at, 'app/pipe')]);
  pkg('app/node_modules/a', { name: 'a', version: '2.0.0', dependencies: { c: '1' } });
  write('app/node_modules/a/index.js', 'a');
  pkg('app/node_modules/a/node_modules/c', { name: 'c', version: '3.0.0' });
  write('app/node_modules/unrelated/package.json', '{"name":"unrelated"}');
  pkg('node_modules/@s/b', { name: '@s/b', version: '1.0.0', dependencies: { c: '1' } });
  write('node_modules/@s/b/lib/b.js', 'b');
  pkg('node_modules/c', { name: 'c', version: '4.0.0' });
  write('node_modules/c/index.js', 'c4');
}

beforeAll(() => {
  dir = tempDir();
  fixture(dir);
  app = path.join(dir, 'app');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the tree digest against a reference implementation', () => {
  it('gives the reference digest, keys (in the same order), counts and missing list for the fixture', () => {
    const want = reference(app);
    expect(want.packages).toBe(5);
    expect(want.missing).toEqual(['app>ghost']);
    expect(view(digestPackageTree(app))).toEqual(want);
    const cache = new DigestCache();
    expect(view(digestPackageTree(app, cache))).toEqual(want);
    expect(view(digestPackageTree(app, cache))).toEqual(want); // warm
    expect(cache.hits).toBeGreaterThan(0);
  });

  it('gives the digest pinned for the fixture (which depends on names, contents, types and links only)', () => {
    // Computed by the walk of commit 92032ca.
    const pinned = 'd979b6be916d47b3e9203dae83f7f96b8487b69d1af501f4c4163b9b4bd6f049';
    expect(reference(app).sha256).toBe(pinned);
    expect(digestPackageTree(app).sha256).toBe(pinned);
  });

  it('gives the reference digest for an installed closure (server-everything: 113 packages)', () => {
    const root = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything');
    const want = reference(root);
    const cache = new DigestCache();
    expect(view(digestPackageTree(root, cache))).toEqual(want);
    expect(view(digestPackageTree(root, cache))).toEqual(want);
  });
});
