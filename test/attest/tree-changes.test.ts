import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addServer, cli, perTestDirs } from '../helpers/warden.js';
import { layoutServerPackage, loaderSession } from '../attack13/loader-session.js';

// Issue 28, item 2: a package tree refused as changed is named file by file (as `dpkg -V` does) in the launch
// refusal and in `status`, from the file list kept when the tree was allowlisted (cache/trees/SHA256.json); a
// new file that is not code is called what it likely is, data the server wrote, with what to do.

const tmp = perTestDirs();

/** test/servers/i28/writes-beside.mjs as src/server.mjs of a package, enrolled as `loader`. */
function enrollWritesBeside(flags: string[] = []): string {
  const server = layoutServerPackage(tmp.dir, { name: 'writes-beside', server: 'i28/writes-beside.mjs' });
  addServer(tmp.home, 'loader', [process.execPath, server], flags);
  return path.dirname(path.dirname(server));
}

function refusalOfRun(): { code: number | null; text: string } {
  const r = cli(tmp.home, ['run', 'loader']);
  return { code: r.code, text: r.stderr };
}

describe('a changed package tree, named file by file', () => {
  it('names memory.jsonl, written beside the server\'s script by its first call, in the next launch\'s refusal and in status, with the data path to set', async () => {
    const pkg = enrollWritesBeside();
    const first = await loaderSession(tmp.home, 'remember', { text: 'warden' });
    expect(first.answer).toContain('loaded: remembered 1');
    expect(fs.existsSync(path.join(pkg, 'src/memory.jsonl'))).toBe(true);

    const refused = refusalOfRun();
    expect(refused.code).toBe(3);
    expect(refused.text).toContain(`package ${fs.realpathSync(pkg)} changed: expected sha256`);
    expect(refused.text).toContain('Since it was allowlisted (1 entry): added "src/memory.jsonl".');
    expect(refused.text).toContain('"src/memory.jsonl" is a new file that is not code: likely data the server wrote beside its own files.');
    expect(refused.text).toContain('MEMORY_FILE_PATH');

    const status = cli(tmp.home, ['status', 'loader']);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('CHANGED (allowlisted sha256');
    expect(status.stdout).toContain('Since it was allowlisted (1 entry): added "src/memory.jsonl".');
    const json = JSON.parse(cli(tmp.home, ['status', 'loader', '--json']).stdout) as { servers: Array<{ artifacts: Array<{ kind: string; state: string; changes?: string }> }> };
    const tree = json.servers[0]?.artifacts.find((a) => a.kind === 'package');
    expect(tree?.state).toBe('digest_mismatch');
    expect(tree?.changes).toContain('added "src/memory.jsonl"');

    // What the message says to do: the file moved out of the package, the tree is the allowlisted one again.
    fs.renameSync(path.join(pkg, 'src/memory.jsonl'), path.join(tmp.dir, 'memory.jsonl'));
    const again = await loaderSession(tmp.home, 'remember', { text: 'again' });
    expect(again.code).toBe(0);
  });

  it('runs twice with its data path set outside its package, and the tree stays the allowlisted one', async () => {
    const data = path.join(tmp.dir, 'data/memory.jsonl');
    fs.mkdirSync(path.dirname(data));
    enrollWritesBeside(['--env', `MEMORY_FILE_PATH=${data}`]);
    expect((await loaderSession(tmp.home, 'remember', { text: 'one' })).answer).toContain('loaded: remembered 1');
    const second = await loaderSession(tmp.home, 'remember', { text: 'two' });
    expect(second.answer).toContain('loaded: remembered 2');
    expect(second.code).toBe(0);
    expect(cli(tmp.home, ['status', 'loader']).code).toBe(0);
  });

  it('names added, removed and changed files, the first 10 and a count of the rest, their names escaped', () => {
    const server = layoutServerPackage(tmp.dir, { name: 'writes-beside', server: 'i28/writes-beside.mjs', writes: { 'README.md': 'read me\n' } });
    addServer(tmp.home, 'loader', [process.execPath, server]);
    const pkg = path.dirname(path.dirname(server));
    for (let i = 0; i < 11; i++) fs.writeFileSync(path.join(pkg, `src/zz-extra${String(i).padStart(2, '0')}.js`), '// added\n');
    fs.writeFileSync(path.join(pkg, 'lib/a\nline\u202e.js'), '// a name with a newline and a bidi override\n');
    fs.appendFileSync(path.join(pkg, 'lib/rpc.mjs'), '// changed\n');
    fs.chmodSync(server, 0o755);
    fs.rmSync(path.join(pkg, 'README.md'));
    const refused = refusalOfRun();
    expect(refused.code).toBe(3);
    const expected =
      'Since it was allowlisted (15 entries): removed "README.md"; added "lib/a\\nline\\u202e.js"; changed "lib/rpc.mjs" (its contents); changed "src/server.mjs" (its mode); ' +
      'added "src/zz-extra00.js"; added "src/zz-extra01.js"; added "src/zz-extra02.js"; added "src/zz-extra03.js"; added "src/zz-extra04.js"; added "src/zz-extra05.js", and 5 more.';
    expect(refused.text).toContain(expected);
    expect(refused.text).not.toContain('zz-extra06');
    expect(refused.text).not.toContain('\u202e');
    expect(refused.text).not.toContain('not code'); // every new file is code
    const status = cli(tmp.home, ['status', 'loader']);
    expect(status.stdout).toContain(expected);
    const json = JSON.parse(cli(tmp.home, ['status', 'loader', '--json']).stdout) as { servers: Array<{ artifacts: Array<{ kind: string; changes?: string }> }> };
    expect(json.servers[0]?.artifacts.find((a) => a.kind === 'package')?.changes).toBe(expected);
  });

  it('says it cannot name the files when no list was kept for the allowlisted tree (a home from before), or the kept one is not that tree\'s', () => {
    const pkg = enrollWritesBeside();
    const trees = path.join(tmp.home, 'cache/trees');
    const [kept] = fs.readdirSync(trees);
    expect(kept).toMatch(/^[0-9a-f]{64}\.json$/);
    fs.writeFileSync(path.join(pkg, 'notes.txt'), 'x\n');
    // A list that is not the allowlisted tree's (one more file in it) proves nothing and is not used.
    const file = path.join(trees, kept as string);
    const listing = JSON.parse(fs.readFileSync(file, 'utf8')) as { packages: Array<{ lines: string[] }> };
    listing.packages[0]?.lines.push('f\0forged.js\0-\0' + '0'.repeat(64));
    fs.writeFileSync(file, JSON.stringify(listing));
    const forged = refusalOfRun();
    expect(forged.code).toBe(3);
    expect(forged.text).toContain('The warden kept no file list of the allowlisted tree');
    expect(forged.text).not.toContain('forged.js');
    fs.rmSync(trees, { recursive: true });
    const none = refusalOfRun();
    expect(none.code).toBe(3);
    expect(none.text).toContain('The warden kept no file list of the allowlisted tree');
  });
});
