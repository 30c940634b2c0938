import fs from 'node:fs';
import Module from 'node:module';
import type { Guard } from './guard.js';

// Shared libraries loaded by something other than process.dlopen, each checked as a file of the attested set:
// SQLite extensions (node:sqlite) and OpenSSL engines (crypto.setEngine, a TLS context's key or client
// certificate engine). Installed by loaders.ts in every thread that can run server code.

/** Taken before any server code runs, like the guard's own fs functions. */
const { existsSync } = fs;
// Read from node's modules once, when the guard is loaded: a named import of a built-in is a live binding, which
// module.syncBuiltinESMExports() (a public API) points at whatever the server put on the module since.
const { createRequire } = Module;

interface SqliteModule {
  DatabaseSync: { prototype: { loadExtension: (this: unknown, file: string, entryPoint?: string) => unknown } };
}

/**
 * node:sqlite (node 22.13+) loads a SQLite extension, a shared library, with its own dlopen. Allowed only for a
 * file of the attested set, named by a path (SQLite searches the library path for a bare name, and tries
 * FILE.so when FILE does not exist or does not load). The module is loaded here, so that every way to it (import, require,
 * process.getBuiltinModule) finds it checked.
 */
export function guardSqliteExtensions(current: () => Guard): void {
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
    // SQLite tries FILE.so when FILE does not load (an attested file that is no library): that one too.
    if (existsSync(`${checked}.so`)) current().file(`${checked}.so`);
    return entryPoint === undefined ? loadExtension.call(this, checked) : loadExtension.call(this, checked, entryPoint);
  };
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

/**
 * OpenSSL loads an engine's shared library with its own dlopen: crypto.setEngine (and on node 20 and 22 the
 * native process.binding('crypto').setEngine behind it), and a TLS context's privateKeyEngine or clientCertEngine,
 * which reach the native context's setEngineKey and setClientCertEngine; those two are checked on the native
 * context's prototype (a server can call them on `tls.SecureContext`'s `context` directly, and node's own fetch
 * makes contexts with an engine it is given). Put in place at start, on every node: loading node:crypto and
 * node:tls costs a node 24 server ~20-40 ms, but putting them in place at the first load of a built-in missed
 * node's internal loads (fetch's undici loads tls itself) and a server's own load hook placed before the guard's.
 */
export function guardOpenSslEnginesNow(current: () => Guard): void {
  guardOpenSslEngines(current, builtinLoader());
}

function builtinLoader(): (id: string) => unknown {
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return typeof getBuiltin === 'function' ? (id: string) => getBuiltin.call(process, id) : createRequire(import.meta.url);
}

/**
 * Loads node's own modules the checks above patch (node:crypto, node:tls and a first TLS context, node:sqlite)
 * without patching anything: ~20-50 ms of a node 24 server's start-up (docs/adr/0056-launch-on-node-24.md). The
 * preload does it while it waits at the gate for the warden's verdict; the checks are put in place after the
 * gate, before any server code, as before. Nothing of the server runs here: these are node's built-ins, which a
 * later load returns from node's cache, the same objects the checks then patch.
 */
export function loadNativeGuardModules(): void {
  const load = builtinLoader();
  quietly(() => {
    const tls = load('node:tls') as { SecureContext: new () => unknown };
    load('node:crypto');
    new tls.SecureContext();
  });
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltin === 'function') quietly(() => getBuiltin.call(process, 'node:sqlite'));
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
