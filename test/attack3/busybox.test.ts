import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';
import { SH_SERVER, enrollByHand, initializeThroughWarden } from './common.js';

// busybox picks its applet from argv[0], or from argv[1] when it is called as `busybox`. The warden looks at the
// command's name only (interpreterFamily, refuseWrappers), so `busybox sh SCRIPT` is not seen as a shell running
// a script (the script is never digested) and `busybox timeout …` is not seen as a wrapper. busybox is not
// installed on every machine: set BUSYBOX=/path/to/busybox (Debian: `apt-get download busybox; dpkg -x`).

const BUSYBOX = [process.env.BUSYBOX, '/bin/busybox', '/usr/bin/busybox'].find((p) => p && fs.existsSync(p));
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-attack3-bb-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!BUSYBOX)('busybox as the command', () => {
  it('`busybox sh SCRIPT`: the script is digested at add, like `sh SCRIPT`', () => {
    const script = path.join(dir, 'server.sh');
    fs.copyFileSync(SH_SERVER, script);
    const r = cli(home, ['add', 'bb', '--yes', '--', BUSYBOX as string, 'sh', script]);
    expect(r.code, r.stderr).toBe(0);
    const allow = JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: { kind: string; path: string }[] };
    expect(allow.entries.filter((e) => e.kind === 'script').map((e) => e.path)).toEqual([script]);
  });

  it('`busybox sh SCRIPT`: a script rewritten after it was allowlisted is refused at run and its code never runs', async () => {
    const script = path.join(dir, 'server.sh');
    fs.copyFileSync(SH_SERVER, script);
    enrollByHand(home, 'bb', BUSYBOX as string, ['sh', script], [BUSYBOX as string]);
    // Rewritten after enrollment: this line was never reviewed or digested.
    const marker = path.join(dir, 'unattested-ran');
    fs.writeFileSync(script, `echo ran > ${marker}\n` + fs.readFileSync(SH_SERVER, 'utf8'));
    const out = await initializeThroughWarden(home, 'bb');
    expect(fs.existsSync(marker)).toBe(false);
    expect(out.first.result).toBeUndefined();
    expect(out.code).toBe(3);
  });

  it('`busybox timeout 100 node server.mjs` is refused at add as WRAPPER_COMMAND, like `timeout 100 node server.mjs`', () => {
    const r = cli(home, ['add', 'bbt', '--yes', '--', BUSYBOX as string, 'timeout', '100', NODE, path.join(SERVERS, 'basic.mjs')]);
    expect(r.stderr).toContain('WRAPPER_COMMAND');
    expect(r.code).toBe(3);
  });

  it('`busybox timeout 100 busybox sh SCRIPT`: the lines of the undigested script are never relayed', async () => {
    const script = path.join(dir, 'server.sh');
    fs.copyFileSync(SH_SERVER, script);
    enrollByHand(home, 'bbt', BUSYBOX as string, ['timeout', '100', BUSYBOX as string, 'sh', script], [BUSYBOX as string]);
    const out = await initializeThroughWarden(home, 'bbt');
    expect(out.first.result).toBeUndefined();
    expect(out.code).toBe(3);
  });
});
