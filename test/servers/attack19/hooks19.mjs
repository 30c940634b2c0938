// A loader-hooks file of the hostile server's own package, run on node's loader-hooks thread (module.register),
// where the preload never runs:
//   data.file     compiles an outside CommonJS file through Module._extensions['.js'] (no Module.prototype.load,
//                 no ES load hook on this thread off node 20).
//   data.esm      require()s an attested ES module that imports an outside one (require(esm)).
//   data.evalFile starts a worker thread from code to eval (node's own Worker: the preload's wrapper is not on
//                 this thread), which require()s an outside CommonJS file; waits for it to end.
import Module, { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export async function initialize(data) {
  if (data?.file) {
    const m = new Module(data.file);
    m.filename = data.file;
    m.paths = [];
    Module._extensions['.js'](m, data.file);
  }
  if (data?.esm) createRequire(import.meta.url)(data.esm);
  if (data?.evalFile) {
    const w = new Worker(`require(${JSON.stringify(data.evalFile)})`, { eval: true });
    await new Promise((resolve) => {
      w.once('exit', resolve);
      w.once('error', resolve);
    });
  }
}

export async function load(url, context, nextLoad) {
  return nextLoad(url, context);
}
