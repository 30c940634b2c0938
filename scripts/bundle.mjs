// Build step, after tsc: bundles the command line (dist/cli/main.js and everything it imports, dependencies
// included) into dist/bundle/, one file for what every verb needs plus one chunk per lazily imported verb, and
// makes dist/cli/main.js a one-line entry that loads it. Node then reads and compiles a few files instead of
// ~150 modules: `run` starts ~60 ms sooner and its process is ~9 MB smaller (docs/adr/0019-fast-launch.md).
// A client's `run` then imports one more file, dist/bundle/plain-run.js, with all of its code (below).
// The other files of dist/ stay as tsc wrote them: the module guard that is loaded into servers
// (dist/launch/preload/, checked against digests.json), the daemon's worker, and what the tests import.
// Every chunk sits in dist/bundle/, one level below dist/ like the folders it came from, so paths made from
// import.meta.url ('../launch/preload/', '../daemon/attestation-worker.js', '../..') mean the same there.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const dist = path.resolve(import.meta.dirname, '../dist');
const outdir = path.join(dist, 'bundle');
const entry = path.join(dist, 'cli/main.js');
const bundledEntry = path.join(dist, 'cli/main.bundled-source.js');
const confusablesData = createRequire(import.meta.url).resolve('unhomoglyph/data.json');

// tsc rewrote dist/cli/main.js; keep its output as the bundle's source and the stub in its place.
fs.renameSync(entry, bundledEntry);
fs.rmSync(outdir, { recursive: true, force: true });
// node's compile cache of the warden's code (src/compile-cache.ts): entries of the last build's chunks would stay.
fs.rmSync(path.join(dist, '.compile-cache'), { recursive: true, force: true });
// markdown-it (src/proxy/markdown-parser.ts) as a file of its own, loaded at the first question or error read as
// Markdown instead of with `run`'s code (~6-9 ms of CPU at every launch, docs/adr/0067-markdown-reading.md). Its
// sha256 is written into the code that loads it, which checks it on the very bytes it compiles: fail closed.
const markdownItFile = path.join(outdir, 'markdown-it.cjs');
await build({
  entryPoints: [createRequire(import.meta.url).resolve('markdown-it')],
  outfile: markdownItFile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const markdownItDigest = createHash('sha256').update(fs.readFileSync(markdownItFile)).digest('hex');
const markdownParserModule = `import { createHash } from 'node:crypto';
import fs from 'node:fs';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { WardenError } from '../error.js';
const DIGEST = '${markdownItDigest}';
let loaded;
export function markdownIt() {
  if (loaded) return loaded;
  const file = fileURLToPath(new URL('./markdown-it.cjs', import.meta.url));
  let code;
  try { code = fs.readFileSync(file); } catch (err) {
    throw new WardenError('WARDEN_FILE_INVALID', \`cannot read \${file}, the warden's Markdown parser: \${err.message}. Reinstall or rebuild mcp-warden ('npm run build').\`);
  }
  const actual = createHash('sha256').update(code).digest('hex');
  if (actual !== DIGEST) {
    throw new WardenError('WARDEN_FILE_INVALID', \`\${file}, the warden's Markdown parser, has sha256 \${actual}, not the \${DIGEST} written into the warden when it was built. Find out what changed it, then reinstall or rebuild mcp-warden.\`);
  }
  const module = { exports: {} };
  vm.compileFunction(code.toString('utf8'), ['module', 'exports', 'require'], { filename: file })(module, module.exports, require);
  return (loaded = module.exports.default ?? module.exports);
}
`;
/** @type {import('esbuild').BuildOptions} */
const common = {
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Prefer a package's ES build: jsonc-parser's CommonJS one is UMD, whose require() calls a bundle cannot follow.
  mainFields: ['module', 'main'],
  chunkNames: '[name]-[hash]',
  // unix-dgram is an optional native addon, loaded at run time where it is installed.
  external: ['unix-dgram'],
  // CommonJS dependencies bundled into ES modules call require() for node's built-ins.
  banner: { js: "import { createRequire as __wardenCreateRequire } from 'node:module'; const require = __wardenCreateRequire(import.meta.url);" },
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [
    {
      // unhomoglyph's confusables table (src/scan/confusables-table.ts) parsed from a string at its first use: V8
      // parses JSON faster than it evaluates an object literal of 6,311 properties (~4 ms of CPU on every `run`,
      // node 24), and a session that never folds a question nor scans a name neither parses nor keeps it
      // (~0.8 MB of heap, docs/adr/0069-run-memory-on-node-24.md). The same data file as tsc's build imports.
      name: 'confusables-parsed-at-first-use',
      setup(b) {
        b.onLoad({ filter: /[\\/]scan[\\/]confusables-table\.js$/ }, () => ({
          contents: `let table; export function confusablesTable() { return (table ??= JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(fs.readFileSync(confusablesData, 'utf8'))))})); }`,
          loader: 'js',
        }));
      },
    },
    {
      name: 'markdown-it-loaded-at-first-use',
      setup(b) {
        b.onLoad({ filter: /[\\/]proxy[\\/]markdown-parser\.js$/ }, (args) => ({ contents: markdownParserModule, loader: 'js', resolveDir: path.dirname(args.path) }));
      },
    },
  ],
};
await build({ ...common, entryPoints: { main: bundledEntry }, splitting: true });
// The launch a client starts (`[--home DIR] run ID`, src/cli/plain-run.ts) as one file with everything it
// imports: main.ts imports it by its path, which the build above leaves alone. On node 24 one file of `run`'s
// code imports in less CPU than its chunks (docs/adr/0056-launch-on-node-24.md). It shares no module with the
// chunks: it settles its own outcome against its own WardenError (src/cli/outcome.ts).
await build({ ...common, entryPoints: { 'plain-run': path.join(dist, 'cli/plain-run.js') }, splitting: false });
fs.rmSync(bundledEntry);
fs.writeFileSync(entry, "#!/usr/bin/env node\n// The command line, bundled by scripts/bundle.mjs: see dist/bundle/.\nimport '../bundle/main.js';\n", { mode: 0o755 });
