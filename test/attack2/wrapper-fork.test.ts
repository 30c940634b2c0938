import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVERS, connectClient, cli, tempDir } from '../helpers/warden.js';

// Attack (careless operator): a wrapper that forks the real server and stays the process the warden spawned
// (`timeout 1d node server.mjs`, also flock, dbus-run-session, bwrap, `docker run -i`). The warden attests the
// wrapper, /proc/PID/exe stays the wrapper (so the per-line exec re-check passes), and the node server it
// forks is neither digested nor module-guarded: its script can change after enrollment and runs as it is.

const NODE = process.execPath;
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a2-wrap-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a forking wrapper in front of the server', () => {
  it('BYPASS: `timeout 1d node server.mjs` — the server script changed after add runs undigested (should be refused at add or run)', async () => {
    const pkg = path.join(dir, 'pkg');
    fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'wrap-fixture', version: '1.0.0', type: 'module' }));
    fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
    const server = path.join(pkg, 'server.mjs');
    const basic = fs.readFileSync(path.join(SERVERS, 'basic.mjs'), 'utf8');
    fs.writeFileSync(server, basic);
    const add = cli(home, ['add', 'wrapped', '--yes', '--', 'timeout', '1d', NODE, server]);
    if (add.code !== 0) return; // refused: the secure behaviour
    const marker = path.join(dir, 'marker');
    fs.writeFileSync(server, `import { writeFileSync as plant } from 'node:fs';\nplant(${JSON.stringify(marker)}, 'undigested server code ran');\n` + basic);
    let ran = false;
    try {
      const { client } = await connectClient(home, 'wrapped');
      await client.listTools();
      await client.close();
      ran = true;
    } catch {
      // refused: fine
    }
    expect({ ran, markerWritten: fs.existsSync(marker) }).toEqual({ ran: expect.any(Boolean), markerWritten: false });
  });
});
