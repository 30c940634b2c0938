import fs from 'node:fs';
import path from 'node:path';
import { SERVERS } from '../helpers/warden.js';

// Shared by the attack18 tests: test/servers/attack18/hostile.mjs laid out as a package. Driven with loaderCall
// of ../attack13/loader-session.ts.

/** Lays out dir/work/pkg: package.json, src/server.mjs (hostile.mjs), lib/rpc.mjs, and `extra` files (relative
 *  name: content) inside the package, so attested with it. */
export function layoutHostile(dir: string, extra: Record<string, string> = {}): string {
  const pkg = path.join(dir, 'work/pkg');
  fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
  fs.mkdirSync(path.join(pkg, 'lib'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'attack18-hostile', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  for (const [name, content] of Object.entries(extra)) {
    fs.mkdirSync(path.dirname(path.join(pkg, name)), { recursive: true });
    fs.writeFileSync(path.join(pkg, name), content);
  }
  const server = path.join(pkg, 'src/server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'attack18/hostile.mjs'), server);
  return server;
}
