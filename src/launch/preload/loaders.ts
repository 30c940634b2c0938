import crypto from 'node:crypto';
import fs from 'node:fs';
import Module from 'node:module';
import tls from 'node:tls';
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

  // Native addons loaded without require().
  const dlopen = process.dlopen.bind(process);
  process.dlopen = (module: object, filename: string, flags?: number): void => {
    const name = String(filename);
    if (!name.includes('/')) current().refuse(`the shared library ${JSON.stringify(name.slice(0, 200))} by bare name (process.dlopen)`, ', which the dynamic loader looks up on the library path, outside its attested set');
    const checked = current().file(name);
    return flags === undefined ? dlopen(module, checked) : dlopen(module, checked, flags);
  };

  guardSqliteExtensions(current);
  guardOpenSslEngines(current);
  keepCompileCacheOff();

  // node 22.15+/23.11+: the server's process replaced by another program, or by a node without the guard.
  const proc = process as unknown as { execve?: unknown };
  if (typeof proc.execve === 'function') {
    proc.execve = (file: unknown): never =>
      current().refuse(`to replace its process with ${JSON.stringify(String(file).slice(0, 200))} (process.execve)`, ', which would run without the module guard; start other programs as child processes');
  }
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

/** An OpenSSL engine is a shared library: allowed only as a file of the attested set named by its path. */
function checkEngine(current: () => Guard, engine: unknown, how: string): string {
  const name = String(engine);
  if (!name.includes('/')) current().refuse(`the OpenSSL engine ${JSON.stringify(name.slice(0, 200))} (${how})`, ', which OpenSSL loads by name from outside its attested set');
  return current().file(name);
}

type NativeMethod = (this: unknown, ...args: unknown[]) => unknown;

/**
 * OpenSSL loads an engine's shared library with its own dlopen: crypto.setEngine, and a TLS context's
 * privateKeyEngine or clientCertEngine, which reach the native context's setEngineKey and setClientCertEngine.
 * Those two are checked on the native context's prototype (a server can call them on `tls.SecureContext`'s
 * `context` directly); loading node:tls and making one context for it costs ~3 ms of the server's start-up.
 */
function guardOpenSslEngines(current: () => Guard): void {
  const setEngine = crypto.setEngine;
  crypto.setEngine = (engine: string, flags?: number): void => {
    const name = checkEngine(current, engine, 'crypto.setEngine');
    return flags === undefined ? setEngine(name) : setEngine(name, flags);
  };
  const SecureContext = (tls as unknown as { SecureContext: new () => { context: object } }).SecureContext;
  // node 20 and 22 still hand out the native binding behind crypto.setEngine (process.binding, deprecated).
  const binding = quietly(() => (process as unknown as { binding?: (name: string) => unknown }).binding?.('crypto')) as { setEngine?: NativeMethod } | undefined;
  const bindingSetEngine = binding?.setEngine;
  if (binding && typeof bindingSetEngine === 'function') {
    binding.setEngine = function guardedBindingSetEngine(this: unknown, engine: unknown, ...rest: unknown[]): unknown {
      return bindingSetEngine.call(this, checkEngine(current, engine, "process.binding('crypto').setEngine"), ...rest);
    };
  }
  const proto = Object.getPrototypeOf(new SecureContext().context) as Record<string, NativeMethod | undefined>;
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
