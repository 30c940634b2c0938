import { layoutServerPackage } from '../attack13/loader-session.js';

/** test/servers/attack19/hostile.mjs with its hooks files and one module of its own. */
export function layoutHostile19(dir: string): string {
  return layoutServerPackage(dir, {
    name: 'attack19-hostile',
    server: 'attack19/hostile.mjs',
    copies: { 'lib/hooks19.mjs': 'attack19/hooks19.mjs', 'lib/plain-hooks.mjs': 'attack19/plain-hooks.mjs' },
    writes: { 'lib/own.mjs': "export const description = 'own';\n" },
  });
}
