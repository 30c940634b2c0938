import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, cli, connectClient, tempDir } from '../helpers/warden.js';

// A read.deny path inside a grant (`--allow-read ~/projects --deny-read ~/projects/.env`, or inside a write
// grant): bubblewrap applies its arguments in turn, and the hidden paths were mounted before the grants
// (src/sandbox/plan.ts), so the grant's bind covered the empty tmpfs or /dev/null that hid the path, and the
// server read it anyway (or, with the grant under the sandbox's private /tmp as here, the final --remount-ro of
// the covered tmpfs failed and no launch was possible). Asserts that a denied directory or file inside a read or write grant stays hidden:
// the directory is empty and read-only, the file can be neither read nor written, and the host's files are
// unchanged.

let dir: string;
let home: string;
let projects: string;
let notes: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  projects = path.join(dir, 'projects');
  notes = path.join(dir, 'notes');
  for (const d of [path.join(projects, 'private'), path.join(notes, 'keys')]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(projects, '.env'), 'TOKEN=secret\n');
  fs.writeFileSync(path.join(projects, 'private/key'), 'private key\n');
  fs.writeFileSync(path.join(notes, 'keys/key'), 'another key\n');
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
  const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-read', projects, '--allow-write', notes, '--deny-read', path.join(projects, '.env'), '--deny-read', path.join(projects, 'private'), '--deny-read', path.join(notes, 'keys')]);
  expect(set.code, set.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a read.deny path inside a grant', () => {
  it('stays hidden: a denied file can be neither read nor written (/dev/null, nodev), a denied directory is empty and read-only, and the host keeps its files', async () => {
    const { client } = await connectClient(home, 'probe');
    const out: string[] = [];
    try {
      for (const [name, file] of [
        ['read', path.join(projects, '.env')],
        ['write', path.join(projects, '.env')],
        ['read', path.join(projects, 'private/key')],
        ['read', path.join(notes, 'keys/key')],
        ['write', path.join(notes, 'keys/key')],
      ] as const) out.push(((await client.callTool({ name, arguments: { path: file } })) as { content: { text: string }[] }).content[0]?.text ?? '');
    } finally {
      await client.close();
    }
    expect(out).toEqual(['denied: EACCES', 'denied: EACCES', 'denied: ENOENT', 'denied: ENOENT', 'denied: EROFS']);
    expect(fs.readFileSync(path.join(projects, '.env'), 'utf8')).toBe('TOKEN=secret\n');
    expect(fs.readFileSync(path.join(notes, 'keys/key'), 'utf8')).toBe('another key\n');
  });
});
