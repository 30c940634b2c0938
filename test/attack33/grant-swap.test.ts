import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedHome } from '../helpers/run-template.js';
import { NODE, SERVERS, cli, connectClient, tempDir } from '../helpers/warden.js';

// ATTACK (sandbox, grants; src/sandbox/plan.ts checkGrants): a grant must name its real path, "so that a link
// replaced later (by whoever can write where it is)" cannot bind something else. The check is a realpath of the
// path string at launch; bubblewrap resolves the same string again when it mounts, on the host's side for the
// source and inside the new root for the destination. Whoever can write the directory the grant lies in (another
// confined server granted that directory, another local user where it is shared) and swaps the grant for a
// relative link between the two has bubblewrap bind the link's target, read-write for a write grant: here a
// directory of the host that no grant names. Asserts the secure behaviour: the server reaches only the directory
// that was checked (or the launch is refused), never the link's target.

let dir: string;
let home: string;
let grant: string;
let elsewhere: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  grant = path.join(dir, 'shared/projects');
  elsewhere = path.join(dir, 'elsewhere');
  fs.mkdirSync(grant, { recursive: true });
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(path.join(elsewhere, 'key'), 'not granted to any server\n');
  addedHome(home, 'probe', [NODE, path.join(SERVERS, 'sandbox-probe.mjs')]); // one add a run, copied
  const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-write', grant]);
  expect(set.code, set.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a write grant swapped for a link after the launch checked it', () => {
  it("binds only the directory the warden checked: the link's target is neither read nor written", async () => {
    const swapper = spawn(NODE, [path.resolve('test/attack33/grant-swapper.mjs'), path.join(home, 'run'), grant, '../elsewhere'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    swapper.stdout.on('data', (d: Buffer) => (said += d.toString()));
    await new Promise<void>((resolve) => swapper.stdout.once('data', () => resolve()));
    let outcome: string[];
    try {
      const { client } = await connectClient(home, 'probe');
      try {
        outcome = [];
        for (const [name, file] of [['read', 'key'], ['write', 'written-through-grant']] as const) outcome.push(((await client.callTool({ name, arguments: { path: path.join(grant, file) } })) as { content: { text: string }[] }).content[0]?.text ?? '');
      } finally {
        await client.close();
      }
    } catch (err) {
      outcome = [`refused ${(err as { data?: { code?: string } }).data?.code}`];
    } finally {
      swapper.kill();
    }
    expect(said).toBe('watching\nswapped\n');
    expect([['denied: ENOENT', 'ok: written'], ['refused SANDBOX_UNAVAILABLE']]).toContainEqual(outcome);
    expect(fs.readdirSync(elsewhere)).toEqual(['key']);
  });
});
