import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requireHost } from '../helpers/host.js';
import { SERVERS, addServer, cli, connectClient, tempDir } from '../helpers/warden.js';

// Attack (careless operator / hostile file next to the server): node command-line flags that load code or
// configuration the warden never digests, and that its NODE_CODE_OPTIONS list (src/attest/plan.ts) does not
// name. `node --env-file=.env server.js` is the everyday way to give a server its settings; node 20 honours
// NODE_OPTIONS found in that file, so a --require in it runs before the module guard's --import, unattested.

const NODE = process.execPath;
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a2-flags-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function layout(): { server: string; pkg: string } {
  const pkg = path.join(dir, 'pkg');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'flags-fixture', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'server.mjs');
  fs.writeFileSync(server, fs.readFileSync(path.join(SERVERS, 'basic.mjs'), 'utf8').replace("'./lib/rpc.mjs'", "'./lib/rpc.mjs'"));
  return { server, pkg };
}

describe('node flags in the enrolled command line', () => {
  it('BYPASS: --env-file whose NODE_OPTIONS is rewritten after add runs an unattested --require (should be refused at add or run)', async () => {
    const { server } = layout();
    const envFile = path.join(dir, 'server.env');
    fs.writeFileSync(envFile, 'GREETING=hello\n');
    const add = cli(home, ['add', 'envfile', '--yes', '--', NODE, `--env-file=${envFile}`, server]);
    // Secure behaviour, option 1: the warden refuses a flag that makes node read code/config it does not digest.
    if (add.code !== 0) {
      expect(add.code).toBeGreaterThan(0);
      return;
    }
    const evil = path.join(dir, 'evil.cjs');
    const marker = path.join(dir, 'marker');
    fs.writeFileSync(evil, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'unattested code ran in the server pid ' + process.pid);\n`);
    fs.writeFileSync(envFile, `NODE_OPTIONS="--require ${evil}"\n`);
    let ran = false;
    try {
      const { client } = await connectClient(home, 'envfile');
      await client.listTools();
      await client.close();
      ran = true;
    } catch {
      // refused: fine
    }
    // Secure behaviour, option 2: the launch is refused, or at least the unattested file never runs.
    expect({ ran, markerWritten: fs.existsSync(marker) }).toEqual({ ran: expect.any(Boolean), markerWritten: false });
  });

  it('BYPASS: --openssl-config=FILE (the flag form of the refused OPENSSL_CONF) loads an undigested shared library into the server (should be refused)', async () => {
    requireHost('cc'); // to build the library
    const { server } = layout();
    const marker = path.join(dir, 'so-marker');
    const src = path.join(dir, 'evil.c');
    const so = path.join(dir, 'evil.so');
    fs.writeFileSync(src, `#include <stdio.h>\n__attribute__((constructor)) static void init(void){ FILE*f=fopen(${JSON.stringify(marker)},"w"); if(f){fputs("native code ran\\n",f);fclose(f);} }\n`);
    expect(spawnSync('cc', ['-shared', '-fPIC', '-o', so, src]).status).toBe(0);
    const cnf = path.join(dir, 'ossl.cnf');
    fs.writeFileSync(cnf, `nodejs_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n[provider_sect]\ndefault = default_sect\n[default_sect]\nactivate = 1\n`);
    const add = cli(home, ['add', 'ossl', '--yes', '--', NODE, `--openssl-config=${cnf}`, server]);
    if (add.code !== 0) return; // refused at add: the secure behaviour
    // After enrollment, the (undigested) config file gains a provider: a shared library nobody digested.
    fs.writeFileSync(cnf, `nodejs_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n[provider_sect]\ndefault = default_sect\nevil = evil_sect\n[default_sect]\nactivate = 1\n[evil_sect]\nmodule = ${so}\nactivate = 1\n`);
    let ran = false;
    try {
      const { client } = await connectClient(home, 'ossl');
      await client.listTools();
      await client.close();
      ran = true;
    } catch {
      // refused: fine
    }
    expect({ ran, markerWritten: fs.existsSync(marker) }).toEqual({ ran: expect.any(Boolean), markerWritten: false });
  });

  it('BYPASS: --snapshot-blob=FILE runs an undigested snapshot instead of the digested script, and node skips the guard\'s --import (should be refused)', async () => {
    const { server } = layout();
    const blob = path.join(dir, 'server.blob');
    const entry = path.join(SERVERS, 'attack2/snapshot-entry.cjs');
    const build = (marker: string): void => {
      const r = spawnSync(NODE, ['--snapshot-blob', blob, '--build-snapshot', entry], { cwd: dir, env: { ...process.env, SNAPSHOT_MARKER: marker }, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    };
    build('');
    const add = cli(home, ['add', 'snap', '--yes', '--', NODE, `--snapshot-blob=${blob}`, server]);
    if (add.code !== 0) return; // refused at add: the secure behaviour
    const marker = path.join(dir, 'snap-marker');
    build(marker); // the blob is not digested: replace it after enrollment
    let ran = false;
    try {
      const { client } = await connectClient(home, 'snap');
      await client.listTools();
      await client.close();
      ran = true;
    } catch {
      // refused: fine
    }
    expect({ ran, markerWritten: fs.existsSync(marker) }).toEqual({ ran: expect.any(Boolean), markerWritten: false });
  });

  it('BYPASS: --inspect in the enrolled command line lets any local process run code in the attested server over the inspector socket (should be refused)', async () => {
    const { server } = layout();
    const port = 19_000 + (process.pid % 900);
    const add = cli(home, ['add', 'insp', '--yes', '--', NODE, `--inspect=127.0.0.1:${port}`, server]);
    if (add.code !== 0) return; // refused at add: the secure behaviour
    const marker = path.join(dir, 'insp-marker');
    const { client } = await connectClient(home, 'insp');
    await client.listTools();
    // Another local user (no credentials needed) attaches to the server's inspector and evaluates code.
    const attacker = path.join(dir, 'attach.mjs');
    fs.writeFileSync(
      attacker,
      `const list = await (await fetch('http://127.0.0.1:${port}/json/list')).json();\n` +
        `const ws = new WebSocket(list[0].webSocketDebuggerUrl);\n` +
        `ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: "require('fs').writeFileSync(${JSON.stringify(marker).replace(/"/g, "'")}, 'code injected into pid ' + process.pid)", includeCommandLineAPI: true } }));\n` +
        `ws.onmessage = () => process.exit(0);\nsetTimeout(() => process.exit(1), 5000);\n`,
    );
    spawnSync(NODE, ['--experimental-websocket', attacker], { timeout: 10_000 });
    await client.close();
    expect(fs.existsSync(marker)).toBe(false);
  });
});
