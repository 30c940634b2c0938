import { layoutServerPackage } from '../attack13/loader-session.js';

// Shared by the attack18 tests: test/servers/attack18/hostile.mjs laid out as a package. Driven with loaderCall
// of ../attack13/loader-session.ts.

/** test/servers/attack18/hostile.mjs, `extra` files (name: content) written into the package (../attack13/loader-session.ts). */
export function layoutHostile(dir: string, extra: Record<string, string> = {}): string {
  return layoutServerPackage(dir, { name: 'attack18-hostile', server: 'attack18/hostile.mjs', writes: extra });
}
