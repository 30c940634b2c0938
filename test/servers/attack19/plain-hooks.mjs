// A pass-through loader-hooks file, as a server with hooks of its own (a tsx-style transpiler) registers.
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, context);
}
export async function load(url, context, nextLoad) {
  return nextLoad(url, context);
}
