import { layoutServerPackage, loaderTemplate } from '../attack13/loader-session.js';

/** test/servers/attack19/hostile.mjs with its hooks files and one module of its own. */
export function layoutHostile19(dir: string): string {
  return layoutServerPackage(dir, {
    name: 'attack19-hostile',
    server: 'attack19/hostile.mjs',
    copies: { 'lib/hooks19.mjs': 'attack19/hooks19.mjs', 'lib/plain-hooks.mjs': 'attack19/plain-hooks.mjs' },
    writes: { 'lib/own.mjs': "export const description = 'own';\n" },
  });
}

/** layoutHostile19's package (nothing added), enrolled once per run and node (templateCall of ../attack13/loader-session.ts). */
export const HOSTILE = loaderTemplate('attack19-hostile', layoutHostile19);
