import fs from 'node:fs';
import Module from 'node:module';
import workerThreads, { type MessagePort } from 'node:worker_threads';
import { COMPILE_CACHE_VARIABLE, compileCacheInStore } from './environment.js';
import { EXIT_REFUSED, createGuard, endProcess, isGuardState, type GuardState } from './guard.js';
import { guardLoaders } from './loaders.js';
import { reportDeniedWrites } from './fs-denials.js';
import { loadNativeGuardModules } from './native.js';
import { guardWorkers, handedDownSet } from './workers.js';

// Read from node's modules once, when the preload is loaded: a named import of a built-in is a live binding, which
// module.syncBuiltinESMExports() (a public API) points at whatever the server put on the module since.
const { register, syncBuiltinESMExports } = Module;
const { MessageChannel, MessagePort: PortClass, isMainThread } = workerThreads;
/** Calls on the port made here are node's own methods, whatever the server later puts on MessagePort.prototype. */
const { postMessage: portPostMessage, close: portClose } = PortClass.prototype;
const apply = Reflect.apply;
/** Hands node's loader-hooks thread a copy of the set through `port`, then closes it. */
const postSet = (port: MessagePort, set: GuardState): void => {
  apply(portPostMessage, port, [set]);
  apply(portClose, port, []);
};

// The warden's module guard, loaded into a node server with `node --import <this file>` before its script.
// It waits for the attested set on the file descriptor 3 the warden passed, which the warden writes only once
// every file in it was digested and allowlisted (and closes it before the server's first line runs), then
// guards every way node loads code from a file: ES modules through loader hooks (here), CommonJS, native addons,
// process.execve and the compile cache (loaders.ts), SQLite extensions and OpenSSL engines (native.ts), worker
// threads (workers.ts). Worker threads run this file again (they inherit --import) and take the set the thread
// that started them handed down (workers.ts).

type LoadHook = (url: string, context: object, nextLoad: (url: string, context: object) => object) => object;
type RegisterHooks = (hooks: { load: LoadHook }) => unknown;

const SET_FD = 3;
/** Far above any real set (server-everything's is ~0.6 MB); a bound all the same. */
const MAX_SET_BYTES = 256 << 20;

function failClosed(why: string): never {
  try {
    fs.writeSync(2, `mcp-warden: this node process was started with the warden's module guard but ${why}; it will not run. (A node process started by the server itself, e.g. with child_process.fork, does not get the attested set.)\n`);
  } catch {
    // no stderr: the exit status says it
  }
  process.exit(EXIT_REFUSED);
}

/**
 * The gate: file descriptor 3 is a socket from the warden, which writes the attested set to it only once it has
 * digested and allowlisted everything in it, then closes it. Until then this read blocks, and with it node,
 * before it has loaded any of the server's code (an --import module runs to its end before the main script is
 * loaded). A closed socket without a set (the warden refused, or died) ends the process.
 */
function readSetFromGate(): GuardState {
  const chunks: Buffer[] = [];
  let total = 0;
  // A node child the server forks gets an IPC channel (a socket, on fd 3 by default) and this file through
  // execArgv: it must refuse, not wait on the channel for whatever the server writes there. The warden gives a
  // server no channel (NODE_CHANNEL_FD), so a process with one was started by something else.
  if (process.channel !== undefined) failClosed(`file descriptor ${SET_FD} is not the warden's attested set`);
  try {
    if (!fs.fstatSync(SET_FD).isSocket()) failClosed(`file descriptor ${SET_FD} is not the warden's gate`);
    const buf = Buffer.alloc(64 * 1024);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(SET_FD, buf, 0, buf.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        Atomics.wait(pause, 0, 0, 2); // a non-blocking socket: wait, still before any server code
        continue;
      }
      if (n === 0) break;
      total += n;
      if (total > MAX_SET_BYTES) failClosed(`the attested set on file descriptor ${SET_FD} is larger than ${MAX_SET_BYTES} bytes`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    fs.closeSync(SET_FD);
    // node 20's fs.realpathSync reads file types from the stat array all of fs shares: the gate's fstat above
    // would leave "socket" there for a realpath that finds a path component in its cache, which then stops
    // following links (require() of a symlinked package resolving to its link, loaded twice through two links).
    fs.lstatSync('/');
  } catch {
    failClosed(`without the attested set on file descriptor ${SET_FD}`);
  }
  let state: unknown;
  try {
    state = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    state = undefined;
  }
  if (!isGuardState(state)) failClosed(total === 0 ? 'the warden released no attested set (it refused the launch, or ended)' : `file descriptor ${SET_FD} does not hold the warden's attested set`);
  return state;
}

// ES modules. node 22.15+ and 23.5+ run synchronous loader hooks in the loading thread (module.registerHooks):
// the guard's are registered at the end of this file, once the set is here. Older node runs loader hooks on a
// thread of their own (module.register), which costs the server's start-up ~40-170 ms (docs/adr/0032-in-thread-
// module-hooks.md): they are registered first, so that node starts that thread while the warden is still
// digesting; they get the set through a port once it is here, and hold every load until then.
const registerHooks = (Module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
/** node's own module.register, taken before the replacement made below. */
const registerOnThread = register as unknown as (...args: unknown[]) => void;
/** Registers the guard's hooks on node's loader-hooks thread; they check every load there once given the set. */
function guardHooksThread(): MessagePort {
  const toHooks = new MessageChannel();
  registerOnThread('./hooks.js', import.meta.url, { data: { port: toHooks.port2, inWorker: !isMainThread, preloadUrl: import.meta.url }, transferList: [toHooks.port2] });
  return toHooks.port1;
}
const toHooksThread = registerHooks === undefined ? guardHooksThread() : undefined;

// node's modules the native checks patch are loaded while the warden may still be judging: the gate's wait,
// not the server's start-up, then pays for them (native.ts).
if (isMainThread) loadNativeGuardModules();
// The guard decides with a copy of its own (createGuard): this object is handed to nothing.
const state: GuardState = isMainThread ? readSetFromGate() : (handedDownSet() as GuardState);
if (!isGuardState(state)) failClosed('the thread that started this worker handed it no attested set');

// A refusal ends the server at once. Not process.exit: it runs the server's 'exit' listeners first, and one that
// throws makes process.exit throw into the code that asked for the load, which could catch it and go on. In a
// worker thread, the whole process is killed (process.exit would end that worker only).
const reallyExit = (process as unknown as { reallyExit?: (code: number) => void }).reallyExit?.bind(process);
const guard = createGuard(state, () => endProcess(isMainThread && reallyExit ? () => reallyExit(EXIT_REFUSED) : undefined));

// node enables a thread's compile cache from its environment before this file runs (environment.ts): the warden
// starts the server without NODE_COMPILE_CACHE and a worker is admitted only from an environment without it. A
// thread that has it anyway ends here (if this file is not the cache's code already: that is why it is kept out).
const noCompileCache = (what: string): void => {
  const value = compileCacheInStore();
  if (value !== undefined) guard.refuse(`${what} with ${COMPILE_CACHE_VARIABLE}=${JSON.stringify(String(value).slice(0, 64))} in its environment`, `, which makes node take code from that cache instead of the files the module guard checks; leave ${COMPILE_CACHE_VARIABLE} out of the environment`);
};
noCompileCache(isMainThread ? 'its modules' : 'a worker thread');

guardLoaders(() => guard, { extensions: registerHooks === undefined });
// The warden cannot see the kernel refuse this server's writes (not root): the server's fs says so (fs-denials.ts).
if (state.denials === true) reportDeniedWrites(fs, state.reportFd, Array.isArray(state.secrets) ? state.secrets.filter((p) => typeof p === 'string') : []);
guardWorkers(() => guard, import.meta.url);

// ES modules, and CommonJS reached through import: checked from now on, before any server code is loaded.
if (registerHooks === undefined) {
  postSet(toHooksThread as MessagePort, guard.handDown());
} else {
  registerHooks({
    load(url, context, nextLoad) {
      guard.url(url);
      return nextLoad(url, context);
    },
  });
  // Hooks of the server's own (module.register) run on a loader thread, which the in-thread hooks do not reach:
  // the module holding them and everything it imports would load unchecked. The guard's hooks go on that thread
  // first, as on node 20, so they check those loads too.
  let hooksThreadGuarded = false;
  (Module as unknown as { register: (...args: unknown[]) => void }).register = function guardedRegister(this: unknown, ...args: unknown[]): void {
    // node starts its loader-hooks thread in the first call, from a copy of this thread's environment store.
    noCompileCache("node's loader-hooks thread");
    if (!hooksThreadGuarded) {
      hooksThreadGuarded = true;
      postSet(guardHooksThread(), guard.handDown());
    }
    registerOnThread.apply(this, args);
  };
}
syncBuiltinESMExports();
