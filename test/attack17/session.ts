import { layoutServerPackage, loaderTemplate } from '../attack13/loader-session.js';

// Shared by the attack17 tests: test/servers/attack17/hostile.mjs laid out as a package. Driven with loaderCall
// of ../attack13/loader-session.ts.

/** test/servers/attack17/hostile.mjs, `extra` files (name: content) written into the package (../attack13/loader-session.ts). */
export function layoutHostile(dir: string, extra: Record<string, string> = {}): string {
  return layoutServerPackage(dir, { name: 'attack17-hostile', server: 'attack17/hostile.mjs', writes: extra });
}

/** layoutHostile's package (nothing added), enrolled once per run and node (templateCall of ../attack13/loader-session.ts). */
export const HOSTILE = loaderTemplate('attack17-hostile', (dir) => layoutHostile(dir));
