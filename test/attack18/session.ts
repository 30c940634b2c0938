import { layoutServerPackage, loaderTemplate } from '../attack13/loader-session.js';

// Shared by the attack18 tests: test/servers/attack18/hostile.mjs laid out as a package. Driven with loaderCall
// of ../attack13/loader-session.ts.

/** test/servers/attack18/hostile.mjs, `extra` files (name: content) written into the package (../attack13/loader-session.ts). */
export function layoutHostile(dir: string, extra: Record<string, string> = {}): string {
  return layoutServerPackage(dir, { name: 'attack18-hostile', server: 'attack18/hostile.mjs', writes: extra });
}

/** layoutHostile's package (nothing added), enrolled once per run and node (templateCall of ../attack13/loader-session.ts). */
export const HOSTILE = loaderTemplate('attack18-hostile', (dir) => layoutHostile(dir));
