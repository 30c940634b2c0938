// Loader hooks of the attack31 worker-cache server that change nothing (padded, so that other code of its length fits).
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, context);
}
//                                                                                                                                                                    
