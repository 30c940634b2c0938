import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { ROOT, perTestDirs } from '../helpers/warden.js';
import { wardenCopy } from '../helpers/warden-copy.js';

// node's compile cache of the warden's own code (src/compile-cache.ts, docs/adr/0056-launch-on-node-24.md), on the
// nodes that have one (22.1+): kept in dist/.compile-cache, owner-only; not used when that directory is a link or
// open to others; and an entry made from other source never runs in place of the file's own code.

const tmp = perTestDirs();

/** The bundle's chunk of `allowlist` (imported after the cache is turned on), by its name without the hash. */
const ALLOWLIST_CHUNK = `bundle/${fs.readdirSync(path.join(ROOT, 'dist/bundle')).find((f) => f.startsWith('allowlist-')) ?? 'allowlist-chunk-missing.js'}`;
const EMPTY = 'The allowlist ';

function allowlistList(node: string, main: string): { status: number | null; stdout: string } {
  const r = spawnSync(node, [main, '--home', tmp.home, 'allowlist', 'list'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return { status: r.status, stdout: r.stdout };
}

/** The cache entries node wrote under `dir` (its per-version directory holds one file per module). */
function entries(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

describe.each(IN_THREAD_NODES)("node's compile cache of the warden's code, on %s", (_label, node) => {
  it('keeps it in dist/.compile-cache, a directory only its user can enter, and fills it with the modules the command imported', () => {
    const copy = wardenCopy(path.join(tmp.dir, 'warden'), ALLOWLIST_CHUNK);
    const r = allowlistList(node, copy.main);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(EMPTY);
    const cache = path.join(tmp.dir, 'warden/dist/.compile-cache');
    const st = fs.lstatSync(cache);
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(process.getuid?.());
    expect(entries(cache).length).toBeGreaterThan(0);
  });

  it('uses no cache when dist/.compile-cache is a link to a directory elsewhere, and writes nothing there', () => {
    const copy = wardenCopy(path.join(tmp.dir, 'warden'), ALLOWLIST_CHUNK);
    const elsewhere = path.join(tmp.dir, 'elsewhere');
    fs.mkdirSync(elsewhere, { mode: 0o700 });
    fs.symlinkSync(elsewhere, path.join(tmp.dir, 'warden/dist/.compile-cache'));
    const r = allowlistList(node, copy.main);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(EMPTY);
    expect(entries(elsewhere)).toEqual([]);
  });

  it('uses no cache when dist/.compile-cache is writable by others, and writes nothing there', () => {
    const copy = wardenCopy(path.join(tmp.dir, 'warden'), ALLOWLIST_CHUNK);
    const cache = path.join(tmp.dir, 'warden/dist/.compile-cache');
    fs.mkdirSync(cache);
    fs.chmodSync(cache, 0o777);
    const r = allowlistList(node, copy.main);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(EMPTY);
    expect(entries(cache)).toEqual([]);
  });

  it("runs a module's changed source, not the code cached from its earlier source of the same length", () => {
    const copy = wardenCopy(path.join(tmp.dir, 'warden'), ALLOWLIST_CHUNK);
    expect(allowlistList(node, copy.main).stdout).toContain(EMPTY);
    expect(allowlistList(node, copy.main).stdout).toContain(EMPTY); // this one from the cache
    const cache = path.join(tmp.dir, 'warden/dist/.compile-cache');
    expect(entries(cache).length).toBeGreaterThan(0);
    // The same length: V8's own check of cached code compares the source's length only.
    const source = fs.readFileSync(copy.alterable, 'utf8');
    expect(source).toContain('`The allowlist ${');
    fs.writeFileSync(copy.alterable, source.replace('`The allowlist ${', '`THE ALLOWLIST ${'));
    const r = allowlistList(node, copy.main);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('THE ALLOWLIST ');
    expect(r.stdout).not.toContain(EMPTY);
  });
});
