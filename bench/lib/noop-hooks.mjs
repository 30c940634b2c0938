// Loader hooks that pass every load through (see noop-register.mjs).
export async function load(url, context, nextLoad) {
  return nextLoad(url, context);
}
