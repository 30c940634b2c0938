import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SERVERS } from './warden.js';
import { makingDir, publish, published } from './run-scratch.js';

// A shared library whose constructor appends "native ran\n" to a marker file (test/servers/attack13/marker-ext.c,
// also a valid SQLite extension), compiled once per test run instead of once per test: compiled with a long
// placeholder as the marker's path, then each copy gets its own path written over the placeholder (NUL-ended) in
// the string constant. A copy is the library `cc -DMARKER="path"` would make, but for the unused bytes of that
// constant; it is written as cc writes its output (mode 0755).

const SOURCE = path.join(SERVERS, 'attack13/marker-ext.c');
const PLACEHOLDER = Buffer.from(`@marker-path@${'#'.repeat(1011)}`); // 1,024 bytes, NUL not counted
let compiled: { library: Buffer; at: number } | undefined;

function compiledOnce(): { library: Buffer; at: number } {
  if (compiled) return compiled;
  let file = published('marker-ext.so');
  if (!file) {
    const out = path.join(makingDir('marker-ext'), 'marker-ext.so');
    const cc = spawnSync('cc', ['-shared', '-fPIC', `-DMARKER=${JSON.stringify(PLACEHOLDER.toString())}`, '-o', out, SOURCE], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`cc failed: ${cc.stderr}`);
    proveCopies(out);
    file = publish(out, 'marker-ext.so');
  }
  compiled = placeholderIn(file);
  return compiled;
}

function placeholderIn(file: string): { library: Buffer; at: number } {
  const library = fs.readFileSync(file);
  const at = library.indexOf(PLACEHOLDER);
  if (at < 0 || library.indexOf(PLACEHOLDER, at + 1) >= 0 || library[at + PLACEHOLDER.length] !== 0) {
    throw new Error(`${file} does not hold the marker placeholder exactly once`);
  }
  return { library, at };
}

/** Before the library is published: a copy made from it, loaded by node, appends to its own marker (so a test
 *  that finds its marker empty shows the library did not run, not that the copy was broken). */
function proveCopies(file: string): void {
  const dir = path.dirname(file);
  const copy = writeCopy(placeholderIn(file), path.join(dir, 'proof/lib.so'), path.join(dir, 'proof/marker'));
  const r = spawnSync(process.execPath, ['-e', `try { process.dlopen({ exports: {} }, ${JSON.stringify(copy)}); } catch {}`], { encoding: 'utf8' });
  const text = fs.existsSync(path.join(dir, 'proof/marker')) ? fs.readFileSync(path.join(dir, 'proof/marker'), 'utf8') : '';
  if (r.status !== 0 || text !== 'native ran\n') throw new Error(`a copy of ${file} loaded by node did not append to its marker (exit ${r.status}, marker ${JSON.stringify(text)}): ${r.stderr}`);
}

/** Writes at `file` the marker library whose constructor appends "native ran\n" to `marker`; returns `file`. */
export function markerLibrary(file: string, marker: string): string {
  return writeCopy(compiledOnce(), file, marker);
}

function writeCopy({ library, at }: { library: Buffer; at: number }, file: string, marker: string): string {
  const name = Buffer.from(marker);
  if (name.length > PLACEHOLDER.length || name.includes(0)) throw new Error(`marker path too long for the library: ${marker}`);
  const copy = Buffer.from(library);
  copy.fill(0, at, at + PLACEHOLDER.length);
  name.copy(copy, at);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, copy, { mode: 0o755 });
  return file;
}
