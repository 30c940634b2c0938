import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { enrolledTemplate, type TemplateSpec } from '../helpers/enrolled-template.js';
import { layoutServerPackage, loaderTemplate } from '../attack13/loader-session.js';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';

// Shared by the attack14 tests: test/servers/attack14/hostile.mjs laid out as a package (with its innocent
// lib/innocent.mjs inside, so attested with it). Driven with loaderCall of ../attack13/loader-session.ts.

/** test/servers/attack14/hostile.mjs with lib/innocent.mjs (../attack13/loader-session.ts). */
export function layoutHostile(dir: string): string {
  return layoutServerPackage(dir, { name: 'attack14-hostile', server: 'attack14/hostile.mjs', copies: { 'lib/innocent.mjs': 'attack14/innocent.mjs' } });
}

/**
 * Writes into `cacheDir` a node compile cache (module.enableCompileCache) whose entry for the ES module `target`
 * holds the code of another source of the same length, one that appends `evil ran` to `marker` and exports
 * greeting "hi". Made as anyone could: `node` (no guard) compiles that source under target's URL (a load hook
 * answers it), then the entry's header gets target's own source size and CRC32, which is all node checks against
 * the source (V8 checks only its length). Returns the number of entries patched (1).
 */
export function poisonCompileCache(node: string, target: string, marker: string, cacheDir: string, work: string): number {
  const source = fs.readFileSync(target);
  const evil = `import fs from 'node:fs'; fs.appendFileSync(${JSON.stringify(marker)}, 'evil ran\\n'); export const greeting = 'hi';`;
  if (evil.length > source.length) throw new Error('target too short for the evil source');
  const padded = evil.padEnd(source.length, ' ');
  fs.mkdirSync(work, { recursive: true });
  const hook = path.join(work, 'compile-as-target.mjs');
  const url = pathToFileURL(target).href;
  fs.writeFileSync(hook, `import { registerHooks } from 'node:module';\nregisterHooks({ load(url, context, nextLoad) { return url === ${JSON.stringify(url)} ? { format: 'module', source: ${JSON.stringify(padded)}, shortCircuit: true } : nextLoad(url, context); } });\n`);
  const r = spawnSync(node, ['--import', pathToFileURL(hook).href, '--input-type=module', '-e', `await import(${JSON.stringify(url)});`], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_COMPILE_CACHE: cacheDir },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`compiling the evil source failed: ${r.stderr}`);
  fs.rmSync(marker, { force: true }); // it ran there, in that node: not the server
  let patched = 0;
  for (const tag of fs.readdirSync(cacheDir)) {
    for (const entry of fs.readdirSync(path.join(cacheDir, tag))) {
      const file = path.join(cacheDir, tag, entry);
      const buf = fs.readFileSync(file);
      // header: magic, code size, cache size, code hash (CRC32 of the source), cache hash (uint32 LE each)
      if (buf.length < 20 || buf.readUInt32LE(4) !== Buffer.byteLength(padded)) continue;
      buf.writeUInt32LE(source.length, 4);
      buf.writeUInt32LE(zlib.crc32(source), 12);
      fs.writeFileSync(file, buf);
      patched++;
    }
  }
  return patched;
}

/** layoutHostile's package (nothing added), enrolled once per run and node (templateCall of ../attack13/loader-session.ts). */
export const HOSTILE = loaderTemplate('attack14-hostile', layoutHostile);

/** The file `name` of the lib/ directory beside an enrolled server's script. */
export const libFile = (name: string) => (server: string): string => path.join(path.dirname(server), '../lib', name);

/** Enrolls `spec` with `node` (its template) and plants, in a cache under `dir`/elsewhere, an entry for the file
 *  `target` names (given the enrolled server's script); returns the cache directory and the marker the planted
 *  code would write. */
export function plantedEntry(dir: string, spec: TemplateSpec, node: string, target: (server: string) => string): { cache: string; marker: string } {
  const marker = path.join(dir, 'marker');
  const { server } = enrolledTemplate(spec, node);
  const cache = path.join(dir, 'elsewhere/compile-cache');
  expect(poisonCompileCache(node, target(server), marker, cache, path.join(dir, 'elsewhere'))).toBe(1);
  return { cache, marker };
}
