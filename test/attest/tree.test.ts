import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DigestCache } from '../../src/attest/cache.js';
import { digestPackageTree } from '../../src/attest/tree.js';
import { tempDir } from '../helpers/warden.js';

let dir: string;
beforeEach(() => (dir = tempDir()));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function pkg(at: string, name: string, deps: Record<string, string> = {}, files: Record<string, string> = {}): void {
  fs.mkdirSync(at, { recursive: true });
  fs.writeFileSync(path.join(at, 'package.json'), JSON.stringify({ name, version: '1.0.0', dependencies: deps }));
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(at, f)), { recursive: true });
    fs.writeFileSync(path.join(at, f), text);
  }
}

describe('the package tree digest', () => {
  it('covers dependencies resolved the way Node resolves them, wherever npm hoisted them', () => {
    const hoisted = path.join(dir, 'hoisted');
    pkg(path.join(hoisted, 'app'), 'app', { dep: '1' }, { 'index.js': 'x' });
    pkg(path.join(hoisted, 'node_modules/dep'), 'dep', {}, { 'i.js': 'y' });
    const nested = path.join(dir, 'nested');
    pkg(path.join(nested, 'app'), 'app', { dep: '1' }, { 'index.js': 'x' });
    pkg(path.join(nested, 'app/node_modules/dep'), 'dep', {}, { 'i.js': 'y' });
    const a = digestPackageTree(path.join(hoisted, 'app'));
    const b = digestPackageTree(path.join(nested, 'app'));
    expect(a.packages).toBe(2);
    expect(a.sha256).toBe(b.sha256);
  });

  it('changes when a file of a dependency changes', () => {
    pkg(path.join(dir, 'app'), 'app', { dep: '1' }, { 'index.js': 'x' });
    pkg(path.join(dir, 'node_modules/dep'), 'dep', {}, { 'i.js': 'y' });
    const before = digestPackageTree(path.join(dir, 'app')).sha256;
    fs.writeFileSync(path.join(dir, 'node_modules/dep/i.js'), 'z');
    expect(digestPackageTree(path.join(dir, 'app')).sha256).not.toBe(before);
  });

  it('changes when a file is added, made executable, or a link re-pointed', () => {
    pkg(path.join(dir, 'app'), 'app', {}, { 'index.js': 'x' });
    fs.symlinkSync('index.js', path.join(dir, 'app/alias.js'));
    const digests = [digestPackageTree(path.join(dir, 'app')).sha256];
    fs.writeFileSync(path.join(dir, 'app/extra.js'), '');
    digests.push(digestPackageTree(path.join(dir, 'app')).sha256);
    fs.chmodSync(path.join(dir, 'app/extra.js'), 0o755);
    digests.push(digestPackageTree(path.join(dir, 'app')).sha256);
    fs.rmSync(path.join(dir, 'app/alias.js'));
    fs.symlinkSync('extra.js', path.join(dir, 'app/alias.js'));
    digests.push(digestPackageTree(path.join(dir, 'app')).sha256);
    expect(new Set(digests).size).toBe(4);
  });

  it('records a declared dependency that is not installed', () => {
    pkg(path.join(dir, 'app'), 'app', { ghost: '1' }, { 'index.js': 'x' });
    const t = digestPackageTree(path.join(dir, 'app'));
    expect(t.missing).toEqual(['app>ghost']);
  });

  it('gives the same digest from a warm cache, and sees a change the cache cannot hide', () => {
    pkg(path.join(dir, 'app'), 'app', {}, { 'index.js': 'x'.repeat(1000) });
    const cache = new DigestCache();
    const cold = digestPackageTree(path.join(dir, 'app'), cache).sha256;
    const warm = digestPackageTree(path.join(dir, 'app'), cache).sha256;
    expect(warm).toBe(cold);
    expect(cache.hits).toBeGreaterThan(0);
    // Same size, same mtime: only ctime moves, and the key includes it.
    const file = path.join(dir, 'app/index.js');
    const st = fs.statSync(file);
    fs.writeFileSync(file, 'y'.repeat(1000));
    fs.utimesSync(file, st.atime, st.mtime);
    expect(digestPackageTree(path.join(dir, 'app'), cache).sha256).not.toBe(cold);
  });
});
