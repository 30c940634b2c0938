import Module from 'node:module';
import vm from 'node:vm';
import { keepCompileCacheOutOfEnvironment } from './environment.js';
import type { Guard } from './guard.js';
import { guardOpenSslEnginesNow, guardSqliteExtensions } from './native.js';

// The ways a node thread loads code from a file other than through the ES module loader, each checked by the
// guard before node reads the file: CommonJS (Module.prototype.load, and on node without in-thread hooks each
// Module._extensions handler, which can be called on its own, and require() of an ES module), native addons
// (process.dlopen), shared libraries others load (SQLite extensions, OpenSSL engines: native.ts), the process
// replacing itself (process.execve: the new node would start without the guard), and node's compile cache (kept
// off, and out of the environment threads are made from: environment.ts; code taken from a cache file instead of
// compiled from the checked source). Installed in every thread that
// can run server code: the main thread and worker threads (preload.ts) and node's loader-hooks thread
// (hooks.ts), where the preload never runs. `current` gives the thread's guard, or refuses when it has none yet.

// Read from node's modules once, when the guard is loaded: a named import of a built-in is a live binding, which
// module.syncBuiltinESMExports() (a public API) points at whatever the server put on the module since.
const { compileFunction } = vm;

type ExtensionHandler = (this: unknown, module: unknown, filename: string) => unknown;
type CompileMethod = (this: unknown, content: string, filename: string, format?: string) => unknown;

const MODULE_WORDS = /\b(?:import|export)\b|\bawait\b/;
const CJS_PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];
/** The syntax errors after which node 20 tries a file as an ES module (its esmSyntaxErrorMessages and
 *  throwsOnlyInCommonJSErrorMessages); any other is thrown to the caller as a SyntaxError. */
const RETRIED_AS_ESM = new Set([
  'Cannot use import statement outside a module',
  "Unexpected token 'export'",
  "Cannot use 'import.meta' outside a module",
  "Identifier 'module' has already been declared",
  "Identifier 'exports' has already been declared",
  "Identifier 'require' has already been declared",
  "Identifier '__filename' has already been declared",
  "Identifier '__dirname' has already been declared",
  'await is only valid in async functions and the top level bodies of modules',
]);

/** Whether node would load `content` as CommonJS, or report its syntax error, rather than try it as an ES
 *  module. Compiled only when a word of module syntax appears (without one a module can import nothing): most
 *  CommonJS files are decided by the regular expression alone. */
function parsesAsCommonJs(content: string, filename: string): boolean {
  if (!MODULE_WORDS.test(content)) return true;
  try {
    // node's own compile allows a "#!" line at the start, a function body does not: it is kept as a comment.
    compileFunction(content.startsWith('#!') ? `//${content}` : content, CJS_PARAMS, { filename });
    return true;
  } catch (err) {
    return !(err instanceof SyntaxError && RETRIED_AS_ESM.has(err.message));
  }
}

/** node's own ERR_REQUIRE_ESM (an Error: a thrown value of the server's with a getter is not read). */
function isRequireEsmError(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  const code = Object.getOwnPropertyDescriptor(err, 'code');
  return code !== undefined && 'value' in code && code.value === 'ERR_REQUIRE_ESM';
}

export interface LoaderOptions {
  /** Also wrap each Module._extensions handler: node 20, where no in-thread hook sees a handler called directly. */
  extensions: boolean;
}

export function guardLoaders(current: () => Guard, options: LoaderOptions): void {
  // CommonJS: every file require() loads (.js, .cjs, .json, .node) goes through Module.prototype.load.
  const proto = Module.prototype as unknown as { load: (this: unknown, filename: string) => unknown };
  const loadCjs = proto.load;
  // Each name is made a string once and checked, and node is handed the real path the check resolved: an object
  // whose toString() answers differently on each call, or a name whose links change between the check and the
  // open ("a/link/../f"), cannot show the check one file and node another.
  // Where the warden started node with require(esm) off (docs/adr/0049-require-esm-on-node-20.md), a require()
  // of an ES module throws ERR_REQUIRE_ESM from the load of that module: recorded for `add` to name, once (the
  // same error passes through the load of every module that required it).
  const requireEsmOff = (process.features as { require_module?: boolean }).require_module === false;
  const noted = new WeakSet<object>();
  proto.load = function guardedLoad(this: unknown, filename: string): unknown {
    const checked = current().file(String(filename));
    if (!requireEsmOff) return loadCjs.call(this, checked);
    try {
      return loadCjs.call(this, checked);
    } catch (err) {
      if (isRequireEsmError(err) && !noted.has(err)) {
        noted.add(err);
        current().requireEsm(checked);
      }
      throw err;
    }
  };

  // A handler called directly (Module._extensions['.js'](module, file)) reads and compiles the file without load().
  if (options.extensions) {
    const extensions = (Module as unknown as { _extensions: Record<string, ExtensionHandler> })._extensions;
    for (const ext of Object.keys(extensions)) {
      const handler = extensions[ext] as ExtensionHandler;
      extensions[ext] = function guardedExtension(this: unknown, module: unknown, filename: string): unknown {
        return handler.call(this, module, current().file(String(filename)));
      };
    }
  }

  // node 20.19+ loads an ES module through require() (require(esm)) and its imports with it, past the loader
  // hooks thread that checks ES modules there: refused where no in-thread hook sees those imports. node's own
  // test, in _compile: format 'module' (.mjs, "type": "module"), or a source that does not parse as CommonJS
  // (node then tries it as an ES module; one that is neither would have been a syntax error).
  if (options.extensions && (process.features as { require_module?: boolean }).require_module === true) {
    const compile = (Module.prototype as unknown as { _compile: CompileMethod })._compile;
    (Module.prototype as unknown as { _compile: CompileMethod })._compile = function guardedCompile(this: unknown, content: string, filename: string, format?: string): unknown {
      if (format === 'module' || (format !== 'commonjs' && !parsesAsCommonJs(String(content), String(filename)))) {
        current().refuse(`${String(filename)} with require() as an ES module`, `, whose imports node ${process.versions.node} loads past the module guard; import it instead, or run the server with node 22.15 or later`);
      }
      return compile.call(this, content, filename, format);
    };
  }

  // Native addons loaded without require().
  const dlopen = process.dlopen.bind(process);
  process.dlopen = (module: object, filename: string, flags?: number): void => {
    const name = String(filename);
    if (!name.includes('/')) current().refuse(`the shared library ${JSON.stringify(name.slice(0, 200))} by bare name (process.dlopen)`, ', which the dynamic loader looks up on the library path, outside its attested set');
    const checked = current().file(name);
    return flags === undefined ? dlopen(module, checked) : dlopen(module, checked, flags);
  };

  guardSqliteExtensions(current);
  guardOpenSslEnginesNow(current);
  keepCompileCacheOff();
  keepCompileCacheOutOfEnvironment();

  // node 22.15+/23.11+: the server's process replaced by another program, or by a node without the guard.
  const proc = process as unknown as { execve?: unknown };
  if (typeof proc.execve === 'function') {
    proc.execve = (file: unknown): never =>
      current().refuse(`to replace its process with ${JSON.stringify(String(file).slice(0, 200))} (process.execve)`, ', which would run without the module guard; start other programs as child processes');
  }
}

interface CompileCacheModule {
  enableCompileCache?: (dir?: string) => unknown;
  constants?: { compileCacheStatus?: { FAILED?: number } };
}

/**
 * node 22.1+ can take a module's compiled code from a cache file (module.enableCompileCache): node checks the
 * entry's source size and checksum, which anyone who can write the cache directory can match, and V8 then runs
 * the cached code for the file the guard checked. That is code from a file outside the attested set, so the
 * cache stays off: enabling it answers FAILED (which a server must handle anyway) and the server runs on,
 * compiling from source. The warden refuses NODE_COMPILE_CACHE in a server's environment (store/servers.ts).
 */
function keepCompileCacheOff(): void {
  const mod = Module as unknown as CompileCacheModule;
  if (typeof mod.enableCompileCache !== 'function') return;
  const failed = mod.constants?.compileCacheStatus?.FAILED ?? 0;
  mod.enableCompileCache = () => ({ status: failed, message: "the warden's module guard keeps node's compile cache off: cached code would not be the source it checked" });
}

