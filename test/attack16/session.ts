import { layoutServerPackage, loaderTemplate } from '../attack13/loader-session.js';

// Shared by the attack16 tests: test/servers/attack16/hostile.mjs laid out as a package. Driven with loaderCall
// of ../attack13/loader-session.ts.

/** test/servers/attack16/hostile.mjs (../attack13/loader-session.ts). */
export function layoutHostile(dir: string): string {
  return layoutServerPackage(dir, { name: 'attack16-hostile', server: 'attack16/hostile.mjs' });
}

/** layoutHostile's package (nothing added), enrolled once per run and node (templateCall of ../attack13/loader-session.ts). */
export const HOSTILE = loaderTemplate('attack16-hostile', layoutHostile);
