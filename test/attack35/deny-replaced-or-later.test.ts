import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS, cli, connectClient, tempDir } from '../helpers/warden.js';

// review 12: `read.deny` hides a path by mounting over it (an empty tmpfs, or /dev/null for a file) in the
// server's mount namespace (src/sandbox/plan.ts, `hide`). A mount over a name is not a property of the name: when
// the host replaces the file the usual way (write a temporary, rename it over: editors, secret rotation, `sed
// -i`), the kernel (since 3.18) detaches mounts that sat on the replaced dentry in every other namespace, and the
// running server reads the new file. A deny path that does not exist at launch is not hidden at all
// (`kindOf` undefined: no mount), so a file created there later is read as well. Asserts that a denied path stays
// unreadable for the whole session, whatever the host does to it.

let dir: string;
let home: string;
let projects: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  projects = path.join(dir, 'projects');
  fs.mkdirSync(projects, { recursive: true });
  fs.writeFileSync(path.join(projects, '.env'), 'TOKEN=secret\n');
  addServerWarm(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]);
  const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-read', projects, '--deny-read', path.join(projects, '.env'), '--deny-read', path.join(projects, 'later.env')]);
  expect(set.code, set.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a read.deny path', () => {
  it('stays unreadable after the host replaces the file by rename, and when it is created after the launch', async () => {
    const { client } = await connectClient(home, 'probe');
    const read = async (file: string): Promise<string> =>
      ((await client.callTool({ name: 'read', arguments: { path: path.join(projects, file) } })) as { content: { text: string }[] }).content[0]?.text ?? '';
    const out: string[] = [];
    try {
      out.push(await read('.env'));
      // The host rotates the secret the way editors and tools write: a temporary file renamed over the old one.
      fs.writeFileSync(path.join(projects, '.env.tmp'), 'TOKEN=rotated-secret\n');
      fs.renameSync(path.join(projects, '.env.tmp'), path.join(projects, '.env'));
      out.push(await read('.env'));
      fs.writeFileSync(path.join(projects, 'later.env'), 'TOKEN=created-later\n');
      out.push(await read('later.env'));
    } finally {
      await client.close();
    }
    expect(out).toEqual(['denied: EACCES', 'denied: EACCES', expect.stringMatching(/^denied: /)]);
  });
});
