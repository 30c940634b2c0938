import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The layout of src/ as a contract (docs/adr/0016-use-cases-below-cli.md): cli/ parses and prints, the use cases
// live below it, and imports never run back up. Every relative module reference of every source file counts,
// type-only imports included: `from '…'`, `import '…'`, `import('…')` and `new URL('…', import.meta.url)`.

const SRC = path.resolve(import.meta.dirname, '../src');

interface Edge {
  /** The importing file and the imported one, relative to src/ (e.g. "daemon/schedule.ts"). */
  from: string;
  to: string;
  /** As written in the source, for the failure message. */
  spec: string;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const REFERENCE = /\bfrom\s*'([^']+)'|\bimport\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|\bnew URL\(\s*'([^']+)',\s*import\.meta\.url/g;

function edgesOf(file: string): Edge[] {
  const from = path.relative(SRC, file);
  const text = fs.readFileSync(file, 'utf8');
  const edges: Edge[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4] ?? '';
    if (!spec.startsWith('./') && !spec.startsWith('../')) continue; // a package or node: builtin
    const target = path.relative(SRC, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts');
    edges.push({ from, to: target, spec });
  }
  return edges;
}

/** The top folder of a path relative to src/ ("" for a file at the top, such as error.ts). */
function folderOf(rel: string): string {
  const i = rel.indexOf(path.sep);
  return i < 0 ? '' : rel.slice(0, i);
}

const EDGES = sourceFiles(SRC).flatMap(edgesOf);

/** The references from files in `from` (any folder when '*') into folders of `into`, as "file imports spec". */
function references(from: string[] | '*', into: string[], except: string[] = []): string[] {
  return EDGES.filter((e) => (from === '*' || from.includes(folderOf(e.from))) && !except.includes(folderOf(e.from)) && into.includes(folderOf(e.to))).map((e) => `src/${e.from} imports '${e.spec}'`);
}

describe('layout: imports never run back up', () => {
  it('the scan sees the references it must judge', () => {
    const seen = (from: string, to: string): boolean => EDGES.some((e) => e.from === from && e.to === to);
    expect(seen(path.join('cli', 'main.ts'), path.join('cli', 'run.ts'))).toBe(true);
    expect(seen(path.join('daemon', 'attestation.ts'), path.join('daemon', 'attestation-worker.ts'))).toBe(true); // new URL(…)
    expect(seen(path.join('daemon', 'schedule.ts'), path.join('supervise', 'surface-check.ts'))).toBe(true);
    // Every reference resolves to a source file: a path this test cannot resolve is a path it cannot judge.
    expect(EDGES.filter((e) => !fs.existsSync(path.join(SRC, e.to))).map((e) => `src/${e.from} imports '${e.spec}'`)).toEqual([]);
  });

  it('no file outside cli/ imports from cli/', () => {
    expect(references('*', ['cli'], ['cli'])).toEqual([]);
  });

  it('enroll/ is used by cli/ and fleet/ (a bundle installs through install\'s path) only, and daemon/ by cli/ only', () => {
    expect(references('*', ['enroll'], ['cli', 'enroll', 'fleet'])).toEqual([]);
    expect(references('*', ['daemon'], ['cli', 'daemon'])).toEqual([]);
  });

  it('fleet/ (trust bundles) is used by cli/ and daemon/ (the fleet source) only', () => {
    expect(references('*', ['fleet'], ['cli', 'daemon', 'fleet'])).toEqual([]);
  });

  it('supervise/ is used by cli/, enroll/ and daemon/ only', () => {
    expect(references('*', ['supervise'], ['cli', 'enroll', 'daemon', 'supervise'])).toEqual([]);
  });

  it('protocol/ imports nothing else of src/', () => {
    expect(EDGES.filter((e) => folderOf(e.from) === 'protocol' && folderOf(e.to) !== 'protocol').map((e) => `src/${e.from} imports '${e.spec}'`)).toEqual([]);
  });

  it('proxy/ is handed what it needs: it imports none of store/, attest/, launch/', () => {
    expect(references(['proxy'], ['store', 'attest', 'launch'])).toEqual([]);
  });

  it('rules/ judges tools and calls only: it imports none of proxy/, launch/, attest/, store/, supervise/', () => {
    expect(references(['rules'], ['proxy', 'launch', 'attest', 'store', 'supervise'])).toEqual([]);
    expect(references(['surface', 'canary', 'protocol'], ['rules'])).toEqual([]);
  });

  it('surface/ and canary/ import none of proxy/, launch/, attest/, store/', () => {
    expect(references(['surface', 'canary'], ['proxy', 'launch', 'attest', 'store'])).toEqual([]);
  });
});
