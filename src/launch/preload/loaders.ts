import fs from 'node:fs';
import Module, { createRequire, syncBuiltinESMExports } from 'node:module';
import { compileFunction } from 'node:vm';
import type { Guard } from './guard.js';

// The ways a node thread loads code from a file other than through the ES module loader, each checked by the
// guard before node reads the file: CommonJS (Module.prototype.load, and on node without in-thread hooks each
// Module._extensions handler, which can be called on its own), native addons (process.dlopen), SQLite
// extensions (node:sqlite's loadExtension: a shared library loaded without dlopen), OpenSSL engines (shared
// libraries OpenSSL loads itself: crypto.setEngine, a TLS context's key or client certificate engine), the
// process replacing itself (process.execve: the new node would start without the guard), and node's compile
// cache (kept off: code taken from a cache file instead of compiled from the checked source). Installed in every
// thread that can run server code: the main thread and worker threads (preload.ts) and node's loader-hooks
// thread (hooks.ts), where the preload never runs. `current` gives the thread's guard, or refuses when it has
// none yet.

/** Taken before any server code runs, like the guard's own fs functions. */
const { existsSync } = fs;

type ExtensionHandler = (this: unknown, module: unknown, filename: string) => unknown;
type CompileMethod = (this: unknown, content: string, filename: string, format?: string) => unknown;

const MODULE_WORDS = /\b(?:import|export)\b|\bawait\b/;
const CJS_PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];

/** Whether node would compile `content` as CommonJS (it tries an ES module only when this fails). Compiled only
 *  when a word of module syntax appears: most CommonJS files are decided by the regular expression alone. */
function parsesAsCommonJs(content: string, filename: string): boolean {
  if (!MODULE_WORDS.test(content)) return true;
  try {
    // node's own compile allows a "#!" line at the start, a function body does not: it is kept as a comment.
    compileFunction(content.startsWith('#!') ? `//${content}` : content, CJS_PARAMS, { filename });
    return true;
  } catch {
    return false;
  }
}

export interface LoaderOptions {
  /** Also wrap each Module._extensions handler: node 20, where no in-thread hook sees a handler called directly. */
  extensions: boolean;
  /** Check OpenSSL engines once the server first loads a module that reaches them (`onBuiltin`, from the
   *  in-thread hook, node 22.15+), not now: node:crypto and node:tls cost a node 24 server ~20-40 ms to load. */
  lazyEngines: boolean;
}

export interface Loaders {
  /** Called with each node: built-in the thread's in-thread hook sees loaded, before it loads. */
  onBuiltin(url: string): void;
}

export function guardLoaders(current: () => Guard, options: LoaderOptions): Loaders {
  // CommonJS: every file require() loads (.js, .cjs, .json, .node) goes through Module.prototype.load.
  const proto = Module.prototype as unknown as { load: (this: unknown, filename: string) => unknown };
  const loadCjs = proto.load;
  // Each name is made a string once and checked, and node is handed the real path the check resolved: an object
  // whose toString() answers differently on each call, or a name whose links change between the check and the
  // open ("a/link/../f"), cannot show the check one file and node another.
  proto.load = function guardedLoad(this: unknown, filename: string): unknown {
    return loadCjs.call(this, current().file(String(filename)));
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
        current().refuse(`${String(filename)} with require() as an ES module`, ', whose imports node 20 loads past the module guard; import it instead');
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
  const engines = openSslEngines(current, options.lazyEngines);
  keepCompileCacheOff();

  // node 22.15+/23.11+: the server's process replaced by another program, or by a node without the guard.
  const proc = process as unknown as { execve?: unknown };
  if (typeof proc.execve === 'function') {
    proc.execve = (file: unknown): never =>
      current().refuse(`to replace its process with ${JSON.stringify(String(file).slice(0, 200))} (process.execve)`, ', which would run without the module guard; start other programs as child processes');
  }
  return engines;
}

interface SqliteModule {
  DatabaseSync: { prototype: { loadExtension: (this: unknown, file: string, entryPoint?: string) => unknown } };
}

/**
 * node:sqlite (node 22.13+) loads a SQLite extension, a shared library, with its own dlopen. Allowed only for a
 * file of the attested set, named by a path (SQLite searches the library path for a bare name, and tries
 * FILE.so when FILE does not exist). The module is loaded here, so that every way to it (import, require,
 * process.getBuiltinModule) finds it checked.
 */
function guardSqliteExtensions(current: () => Guard): void {
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltin !== 'function') return;
  // node 24 warns that it is experimental when it is loaded: the server's to see only if it loads it itself.
  const sqlite = quietly(() => getBuiltin.call(process, 'node:sqlite') as SqliteModule | undefined);
  const proto = sqlite?.DatabaseSync?.prototype;
  if (!proto || typeof proto.loadExtension !== 'function') return;
  const loadExtension = proto.loadExtension;
  proto.loadExtension = function guardedLoadExtension(this: unknown, file: string, entryPoint?: string): unknown {
    const name = String(file);
    const found = name.includes('/') ? [name, `${name}.so`].find((f) => existsSync(f)) : undefined;
    if (found === undefined) current().refuse(`the SQLite extension ${JSON.stringify(name.slice(0, 200))}`, ', which is not a file of its attested set named by its path');
    const checked = current().file(found as string);
    return entryPoint === undefined ? loadExtension.call(this, checked) : loadExtension.call(this, checked, entryPoint);
  };
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

/** An OpenSSL engine is a shared library: allowed only as an existing file of the attested set named by its
 *  absolute path. OpenSSL looks any other name up itself: a bare id in its engines directory, a relative name in
 *  $OPENSSL_ENGINES (which the server can set while it runs) before the working directory. */
function checkEngine(current: () => Guard, engine: unknown, how: string): string {
  const name = String(engine);
  if (!name.startsWith('/') || !existsSync(name)) current().refuse(`the OpenSSL engine ${JSON.stringify(name.slice(0, 200))} (${how})`, ', which is not a file of its attested set named by its absolute path (OpenSSL looks other names up in directories of its own)');
  return current().file(name);
}

type NativeMethod = (this: unknown, ...args: unknown[]) => unknown;

/** The built-ins through which a server reaches an OpenSSL engine (https and http2 load tls themselves). */
const ENGINE_MODULES = new Set(['crypto', 'tls', 'https', 'http2', '_tls_common', '_tls_wrap']);

/**
 * OpenSSL loads an engine's shared library with its own dlopen: crypto.setEngine (and on node 20 and 22 the
 * native process.binding('crypto').setEngine behind it), and a TLS context's privateKeyEngine or clientCertEngine,
 * which reach the native context's setEngineKey and setClientCertEngine; those two are checked on the native
 * context's prototype (a server can call them on `tls.SecureContext`'s `context` directly). Either now, or (lazy,
 * node 22.15+) before the server's first load of a built-in that reaches them: the in-thread hook sees every
 * `import` and `require` of one, and process.getBuiltinModule and process.binding are wrapped here.
 */
function openSslEngines(current: () => Guard, lazy: boolean): Loaders {
  let guarded = false;
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const load = typeof getBuiltin === 'function' ? (id: string) => getBuiltin.call(process, id) : createRequire(import.meta.url);
  const guardNow = (): void => {
    if (guarded) return;
    guarded = true; // first: loading the modules below comes through onBuiltin again
    guardOpenSslEngines(current, load);
    syncBuiltinESMExports();
  };
  const onBuiltin = (url: string): void => {
    if (!guarded && ENGINE_MODULES.has(url.startsWith('node:') ? url.slice(5) : url)) guardNow();
  };
  if (!lazy) {
    guardNow();
    return { onBuiltin };
  }
  const proc = process as unknown as { getBuiltinModule?: (id: string) => unknown; binding?: (name: string) => unknown };
  if (typeof getBuiltin === 'function') {
    proc.getBuiltinModule = (id: string): unknown => {
      onBuiltin(String(id));
      return getBuiltin.call(process, id);
    };
  }
  const binding = proc.binding;
  if (typeof binding === 'function') {
    proc.binding = (name: string): unknown => {
      if (String(name) === 'crypto') guardNow();
      return binding.call(process, name);
    };
  }
  return { onBuiltin };
}

function guardOpenSslEngines(current: () => Guard, load: (id: string) => unknown): void {
  const crypto = load('node:crypto') as { setEngine: (engine: string, flags?: number) => void };
  const tls = load('node:tls') as { SecureContext: new () => { context: object } };
  const setEngine = crypto.setEngine;
  crypto.setEngine = (engine: string, flags?: number): void => {
    const name = checkEngine(current, engine, 'crypto.setEngine');
    return flags === undefined ? setEngine(name) : setEngine(name, flags);
  };
  const binding = quietly(() => (process as unknown as { binding?: (name: string) => unknown }).binding?.('crypto')) as { setEngine?: NativeMethod } | undefined;
  const bindingSetEngine = binding?.setEngine;
  if (binding && typeof bindingSetEngine === 'function') {
    binding.setEngine = function guardedBindingSetEngine(this: unknown, engine: unknown, ...rest: unknown[]): unknown {
      return bindingSetEngine.call(this, checkEngine(current, engine, "process.binding('crypto').setEngine"), ...rest);
    };
  }
  const proto = Object.getPrototypeOf(new tls.SecureContext().context) as Record<string, NativeMethod | undefined>;
  const setEngineKey = proto.setEngineKey;
  if (typeof setEngineKey === 'function') {
    proto.setEngineKey = function guardedSetEngineKey(this: unknown, identifier: unknown, engine: unknown): unknown {
      return setEngineKey.call(this, String(identifier), checkEngine(current, engine, "a TLS context's privateKeyEngine"));
    };
  }
  const setClientCertEngine = proto.setClientCertEngine;
  if (typeof setClientCertEngine === 'function') {
    proto.setClientCertEngine = function guardedSetClientCertEngine(this: unknown, engine: unknown): unknown {
      return setClientCertEngine.call(this, checkEngine(current, engine, "a TLS context's clientCertEngine"));
    };
  }
}

/** Runs `load` with node's warnings held back (a module or binding the guard loads for its checks), or undefined
 *  when it throws (not in this node). */
function quietly<T>(load: () => T): T | undefined {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return load();
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}
