import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';

// Issue 28 item 7: a warden home inside the server's package tree (`--home ./.warden` beside its package.json)
// would change the tree the warden digests with every write of its own; every launch would be refused "package
// changed". `add` refuses it, and names both.

let dir: string;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

it('add refuses a home inside the package tree the server runs from, naming both, and adds nothing', () => {
  const pkg = path.join(dir, 'pkg');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), '{"name":"p","version":"1.0.0","type":"module"}');
  fs.copyFileSync(path.join(SERVERS, 'basic.mjs'), path.join(pkg, 'server.mjs'));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const home = path.join(pkg, '.warden');
  const r = cli(home, ['add', 'p', '--yes', '--', NODE, path.join(pkg, 'server.mjs')]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`mcp-warden: HOME_IN_PACKAGE: server 'p': the warden home ${home} is inside the package tree ${pkg} it would digest`);
  expect(fs.existsSync(path.join(home, 'servers.json'))).toBe(false);
  expect(fs.existsSync(path.join(home, 'tools.lock'))).toBe(false);
});
