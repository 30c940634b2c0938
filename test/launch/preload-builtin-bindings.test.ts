import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The module guard runs inside the server's process (src/launch/preload/). An ES module's named import of a node
// built-in (`import { x } from 'node:m'`) is a live binding: module.syncBuiltinESMExports(), a public API, points
// it at whatever the server has put on the module since. So no file of the guard may hold one: each takes what it
// uses from a built-in's default export (the module object itself, which nothing re-points) once, when it is
// loaded, before any server code. Type-only names (`type X`) are not bindings at run time and may be imported.

const PRELOAD = path.resolve(import.meta.dirname, '../../src/launch/preload');

/** The value (non-type) names each `import ... from 'node:...'` of `source` binds by name. */
function namedBuiltinBindings(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/import\s+([^;]*?)\s+from\s+['"](node:[^'"]+)['"]/g)) {
    const clause = m[1] as string;
    if (/^type\s/.test(clause)) continue;
    if (/\*\s+as\s/.test(clause)) found.push(`${m[2]}: * as (a namespace, whose properties are live too)`);
    const braces = /\{([^}]*)\}/.exec(clause);
    if (!braces) continue;
    for (const name of (braces[1] as string).split(',').map((n) => n.trim()).filter((n) => n !== '')) {
      if (!/^type\s/.test(name)) found.push(`${m[2]}: ${name}`);
    }
  }
  return found;
}

describe("the module guard's files and node's built-ins", () => {
  it('no file of the guard imports a value from a node: built-in by name (a live binding the server can re-point)', () => {
    const files = fs.readdirSync(PRELOAD).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    const named = files.flatMap((f) => namedBuiltinBindings(fs.readFileSync(path.join(PRELOAD, f), 'utf8')).map((b) => `${f}: ${b}`));
    expect(named).toEqual([]);
  });

  it('the scan finds a named import, a namespace import and a default import with named ones, and passes type-only names', () => {
    expect(namedBuiltinBindings("import { fileURLToPath } from 'node:url';")).toEqual(['node:url: fileURLToPath']);
    expect(namedBuiltinBindings("import wt, { SHARE_ENV, type WorkerOptions } from 'node:worker_threads';")).toEqual(['node:worker_threads: SHARE_ENV']);
    expect(namedBuiltinBindings("import * as url from 'node:url';")).toHaveLength(1);
    expect(namedBuiltinBindings("import wt, { type MessagePort } from 'node:worker_threads';\nimport type { Stats } from 'node:fs';\nimport fs from 'node:fs';")).toEqual([]);
  });
});
