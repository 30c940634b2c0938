import { layoutServerPackage, loaderTemplate } from '../attack13/loader-session.js';

// Shared by the attack15 tests: test/servers/attack15/hostile.mjs laid out as a package (with its innocent
// lib/worker.mjs inside, so attested with it). Driven with loaderCall of ../attack13/loader-session.ts.

/** test/servers/attack15/hostile.mjs with lib/worker.mjs (../attack13/loader-session.ts). */
export function layoutHostile(dir: string): string {
  return layoutServerPackage(dir, { name: 'attack15-hostile', server: 'attack15/hostile.mjs', copies: { 'lib/worker.mjs': 'attack15/worker.mjs' } });
}

/** layoutHostile's package (nothing added), enrolled once per run and node (templateCall of ../attack13/loader-session.ts). */
export const HOSTILE = loaderTemplate('attack15-hostile', layoutHostile);
