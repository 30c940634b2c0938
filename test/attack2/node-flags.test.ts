import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, cli, perTestDirs, refusedInitialize } from '../helpers/warden.js';

// Attack (careless operator / hostile file next to the server): node command-line flags that load code or
// configuration the warden never digests. `node --env-file=.env server.js` is the everyday way to give a server
// its settings; node 20 honours NODE_OPTIONS found in that file, so a --require in it would run before the module
// guard's --import, unattested. The warden permits only options that tune node and load nothing
// (src/attest/interpreters.ts): each of these is refused at `add`, and at `run` when servers.json is edited to
// carry it after the server was enrolled.

const dirs = perTestDirs();

function layout(): string {
  const pkg = path.join(dirs.dir, 'pkg');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'flags-fixture', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'basic.mjs'), server);
  return server;
}

/** Each flag with the file it makes node read (written so that, if it were ever honoured, it would leave a marker). */
const FLAGS: { flag: string; file: (marker: string) => string }[] = [
  { flag: '--env-file', file: (marker) => write('server.env', `NODE_OPTIONS="--require ${write('evil.cjs', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`)}"\n`) },
  { flag: '--openssl-config', file: () => write('ossl.cnf', 'nodejs_conf = openssl_init\n[openssl_init]\n') },
  { flag: '--snapshot-blob', file: () => write('server.blob', '') },
  { flag: '--inspect', file: () => '127.0.0.1:0' },
];

function write(name: string, text: string): string {
  const file = path.join(dirs.dir, name);
  fs.writeFileSync(file, text);
  return file;
}

function serverIds(): string[] {
  const file = path.join(dirs.home, 'servers.json');
  if (!fs.existsSync(file)) return [];
  return Object.keys((JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, unknown> }).servers);
}

describe('node flags that load code or configuration the warden does not digest', () => {
  for (const { flag, file } of FLAGS) {
    it(`add refuses ${flag}=VALUE with NODE_OPTION_REFUSED and enrolls nothing`, () => {
      const server = layout();
      const marker = path.join(dirs.dir, 'marker');
      const add = cli(dirs.home, ['add', 'flagged', '--yes', '--', NODE, `${flag}=${file(marker)}`, server]);
      expect(add.code).toBe(3);
      expect(add.stderr).toContain(`NODE_OPTION_REFUSED: server 'flagged' passes node the option '${flag}'`);
      expect(serverIds()).not.toContain('flagged');
      expect(fs.existsSync(marker)).toBe(false);
    });

    it(`run refuses ${flag}=VALUE written into servers.json after the server was enrolled, before the server starts`, async () => {
      const server = layout();
      addServer(dirs.home, 'flagged', [NODE, server]);
      const marker = path.join(dirs.dir, 'marker');
      const serversJson = path.join(dirs.home, 'servers.json');
      const config = JSON.parse(fs.readFileSync(serversJson, 'utf8')) as { servers: Record<string, { args: string[] }> };
      (config.servers.flagged as { args: string[] }).args.unshift(`${flag}=${file(marker)}`);
      fs.writeFileSync(serversJson, JSON.stringify(config, null, 2));
      const { error, code } = await refusedInitialize(dirs.home, 'flagged');
      expect(error.data.code).toBe('NODE_OPTION_REFUSED');
      expect(code).toBe(3);
      expect(fs.existsSync(marker)).toBe(false);
    });
  }
});
