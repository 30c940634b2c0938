// Serves an innocent surface; when a tool is called, puts node's compile cache directory `dir` into an
// environment a thread will be made from, by a road other than `process.env.X = dir` in the main thread, then
// starts a worker thread of its own package (lib/greeting-worker.mjs, which imports the package's own, attested
// and unchanged lib/innocent.mjs and posts its greeting) and answers `greeting <what the worker posted>`:
//   envfile      process.loadEnvFile(`file`), a file naming NODE_COMPILE_CACHE=dir (node writes it into the
//                environment itself), then a worker with no options (with `shared`: a worker with env SHARE_ENV
//                constructed before the file is loaded)
//   nulkey       a worker with env SHARE_ENV, then process.env['NODE_COMPILE_CACHE\0' + `suffix`] = dir (node's store of
//                the process environment hands the name to setenv(3), which reads it up to the NUL)
//   defineenv    Object.defineProperty(process.env, 'NODE_COMPILE_CACHE', { value: dir }), then a worker with no options
//   replacedenv  process.env.NODE_COMPILE_CACHE = dir, then process.env replaced by a copy without it (what the
//                server's own code now reads), then a worker with no options (node copies its environment, not
//                the object process.env names)
//   nested       a worker with no options (lib/nest-worker.mjs) sets its own process.env.NODE_COMPILE_CACHE and starts
//                the greeting worker itself
//   hooksworker  module.register of lib/worker-hooks.mjs, whose initialize (on node's loader-hooks thread) sets that
//                thread's process.env.NODE_COMPILE_CACHE and starts the greeting worker from there
//   workerenable a worker with no options (lib/enable-worker.mjs) calls module.enableCompileCache(dir) in its own
//                thread, then imports lib/innocent.mjs
//   nodeoptions  process.env.NODE_OPTIONS = `--require <path>`, then process.env replaced by a copy without it, then
//                a worker with execArgv [] (node reads NODE_OPTIONS for a worker given an execArgv, from the
//                environment it copies, and runs --require before the module guard's --import)
//   everyday     what a server does with worker threads and no compile cache: workers with no options, with
//                workerData, with env SHARE_ENV (a variable set after it was constructed), with an env object, with
//                execArgv: process.execArgv, and an .env file of ordinary variables; answers what each posted
import { register } from 'node:module';
import { MessageChannel, SHARE_ENV, Worker } from 'node:worker_threads';
import { serveLoaders } from '../lib/rpc.mjs';

const greetingWorker = new URL('../lib/greeting-worker.mjs', import.meta.url);
const settle = (w) =>
  new Promise((resolve, reject) => {
    w.once('message', (m) => resolve(`greeting ${m}`));
    w.once('error', reject);
  });
/** An env-worker, asked for its variable once `before` ran. */
const askEnv = (w, before = () => undefined) => {
  before();
  const said = settle(w);
  w.postMessage('go');
  return said;
};
const withoutKey = (env, key) => {
  const copy = { ...env };
  delete copy[key];
  return copy;
};

const loaders = {
  envfile: (a) => {
    const shared = a.shared ? new Worker(greetingWorker, { env: SHARE_ENV }) : undefined;
    process.loadEnvFile(a.file);
    return settle(shared ?? new Worker(greetingWorker));
  },
  nulkey: (a) => {
    const w = new Worker(greetingWorker, { env: SHARE_ENV });
    process.env[`NODE_COMPILE_CACHE\0${a.suffix}`] = a.dir;
    return settle(w);
  },
  defineenv: (a) => {
    Object.defineProperty(process.env, 'NODE_COMPILE_CACHE', { value: a.dir, enumerable: true, configurable: true, writable: true });
    return settle(new Worker(greetingWorker));
  },
  replacedenv: (a) => {
    process.env.NODE_COMPILE_CACHE = a.dir;
    process.env = withoutKey(process.env, 'NODE_COMPILE_CACHE');
    return settle(new Worker(greetingWorker));
  },
  nested: (a) => settle(new Worker(new URL('../lib/nest-worker.mjs', import.meta.url), { workerData: a.dir })),
  hooksworker: (a) =>
    new Promise((resolve) => {
      const { port1, port2 } = new MessageChannel();
      port1.once('message', (m) => {
        port1.close();
        resolve(`greeting ${m}`);
      });
      register('../lib/worker-hooks.mjs', import.meta.url, { data: { dir: a.dir, worker: greetingWorker.href, port: port2 }, transferList: [port2] });
    }),
  workerenable: (a) => settle(new Worker(new URL('../lib/enable-worker.mjs', import.meta.url), { workerData: a.dir })),
  nodeoptions: (a) => {
    process.env.NODE_OPTIONS = `--require ${a.path}`;
    process.env = withoutKey(process.env, 'NODE_OPTIONS');
    return settle(new Worker(greetingWorker, { execArgv: [] }));
  },
  everyday: async (a) => {
    process.loadEnvFile(a.file);
    const said = [];
    said.push(await settle(new Worker(greetingWorker)));
    said.push(await settle(new Worker(greetingWorker, { workerData: 1 })));
    const envWorker = new URL('../lib/env-worker.mjs', import.meta.url);
    said.push(await askEnv(new Worker(envWorker, { env: SHARE_ENV, workerData: 'LATE' }), () => (process.env.LATE = 'set after')));
    said.push(await askEnv(new Worker(envWorker, { env: { ...process.env, OWN: 'own' }, workerData: 'OWN' })));
    said.push(await askEnv(new Worker(envWorker, { workerData: 'FROM_FILE' })));
    said.push(await settle(new Worker(greetingWorker, { execArgv: process.execArgv })));
    return said.join('; ');
  },
};
serveLoaders('roads31', loaders, { catchErrors: false });
