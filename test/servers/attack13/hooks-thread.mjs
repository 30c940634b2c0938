// The package's own loader hooks (module.register), innocent to look at: they pass every load on. Their
// initialize loads what it is given on the loader-hooks thread, with require() or process.dlopen.
import { createRequire } from 'node:module';

export function initialize(data) {
  if (data?.require) createRequire(import.meta.url)(data.require);
  if (data?.dlopen) {
    try {
      process.dlopen({ exports: {} }, data.dlopen);
    } catch {
      // not a node addon: its constructors ran all the same
    }
  }
}

export async function load(url, context, nextLoad) {
  return nextLoad(url, context);
}
