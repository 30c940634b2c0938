import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, auditEvents, cli, refusedInitialize, tempDir } from '../helpers/warden.js';

// Attack on the gate (docs/adr/0019-fast-launch.md): node is started once its interpreter is judged, before the
// script is digested. For a "#!" script the options node is started with come from the script's first line,
// which is read (resolveLaunch) but not yet judged. A script changed after enrollment so that its "#!" line says
// `--require=FILE` would have FILE run by node's start-up, before the warden's preload and before the verdict.
// Since review 13 such a line is refused outright (NODE_OPTION_REFUSED), at add and at every launch.

const BIG = 512 * 1024 * 1024;

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a5-shebang-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A package whose server is a "#!" script run by `shebang`, with a large sparse data file (digesting it
 *  again after a change is the window in which node is up before the verdict). */
function shebangPackage(shebang: string): { server: string; big: string } {
  const pkg = path.join(dir, 'pkg');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'shebang', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'server.mjs');
  fs.writeFileSync(server, `${shebang}\n${fs.readFileSync(path.join(SERVERS, 'basic.mjs'), 'utf8')}`, { mode: 0o755 });
  const big = path.join(pkg, 'data.bin');
  fs.writeFileSync(big, '');
  fs.truncateSync(big, BIG);
  return { server, big };
}

/** Changes the first line of `file`, keeping the rest. */
function rewriteShebang(file: string, line: string): void {
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, `${line}\n${text.slice(text.indexOf('\n') + 1)}`);
}

describe('a "#!" node script changed after enrollment', () => {
  it('runs none of the code its new "#!" options name (--require) before it is refused', async () => {
    const marker = path.join(dir, 'early');
    const evil = path.join(dir, 'evil.cjs');
    fs.writeFileSync(evil, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, String(process.pid));\n`);
    const { server, big } = shebangPackage(`#!${NODE}`);
    addServer(home, 'sb', [server]);

    rewriteShebang(server, `#!${NODE} --require=${evil}`);
    const fd = fs.openSync(big, 'r+');
    fs.writeSync(fd, 'x', 0); // the tree is digested again, not read from the cache
    fs.closeSync(fd);

    const r = await refusedInitialize(home, 'sb');
    expect(r.error.data.code).toBe('NODE_OPTION_REFUSED'); // refused from its "#!" line, before any digest
    expect(r.code).toBe(3);
    const ran = fs.existsSync(marker) ? Number(fs.readFileSync(marker, 'utf8')) : undefined;
    expect(ran, `code named by the changed "#!" line ran in process ${ran} before the verdict`).toBeUndefined();
    expect(auditEvents(home).filter((e) => e.event === 'launch').at(-1)).toMatchObject({ decision: 'refuse', code: 'NODE_OPTION_REFUSED' });
  });

  it('refuses at add, with NODE_OPTION_REFUSED naming the script and the option, a "#!" line that makes node --require a file', () => {
    const hook = path.join(dir, 'hook.cjs');
    fs.writeFileSync(hook, '// changed after enrollment, it would run at every launch unjudged\n');
    const { server } = shebangPackage(`#!${NODE} --require=${hook}`);
    fs.truncateSync(path.join(dir, 'pkg/data.bin'), 0);
    const r = cli(home, ['add', 'hooked', '--yes', '--', server]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('NODE_OPTION_REFUSED');
    expect(r.stderr).toContain('--require');
    expect(r.stderr).toContain(fs.realpathSync(server));
  });

  it('still starts an unchanged "#!" script whose line carries an option that loads nothing', async () => {
    const { server } = shebangPackage(`#!${NODE} --no-warnings`);
    fs.truncateSync(path.join(dir, 'pkg/data.bin'), 0);
    const added = addServer(home, 'quiet', [server]);
    expect(added.code).toBe(0);
    const events = auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'quiet');
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.decision === 'allow')).toBe(true);
  });
});
