import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeWithOutside } from '../helpers/probe-home.js';
import { NODE, WARDEN, cli, connectWarden } from '../helpers/warden.js';

// review 16: read.deny hides a name by rebuilding its directory at that path inside the sandbox
// (sandbox/deny-plan.ts); the root is bound whole and recursively, so a bind mount of the host that shows the same
// directory under another name (container hosts, /srv and /mnt aliases: what review 12, finding 4 closed for
// grants by comparing device and inode) still shows the denied file under the alias. The warden here runs in a
// mount namespace of the test's own where the alias exists (unshare -m; the machine's tests run as root).

const t = probeWithOutside('warden-deny-alias-');

describe('a read.deny path whose directory the host also shows under a bind-mounted alias', () => {
  it('is not read through the alias: the read is denied, or the launch refused', async () => {
    const data = path.join(t.outside, 'data');
    const alias = path.join(t.outside, 'alias');
    fs.mkdirSync(data);
    fs.mkdirSync(alias);
    const secret = 'TOKEN=secret\n';
    fs.writeFileSync(path.join(data, 'secret.env'), secret);
    const set = cli(t.home, ['sandbox', 'probe', '--network', 'none', '--deny-read', path.join(data, 'secret.env')]);
    expect(set.code, set.stderr).toBe(0);
    const warden = ['unshare', '-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$1" "$2" && shift 2 && exec "$@"', 'sh', data, alias, NODE, WARDEN];
    const outcome = await connectWarden(warden, t.home, 'probe').then(
      async ({ client }) => {
        const read = async (p: string): Promise<string> => ((await client.callTool({ name: 'read', arguments: { path: p } })) as { content: { text: string }[] }).content[0]?.text ?? '';
        try {
          expect(await read(path.join(data, 'secret.env'))).toBe('denied: EACCES');
          return await read(path.join(alias, 'secret.env'));
        } finally {
          await client.close();
        }
      },
      () => 'launch refused',
    );
    expect(outcome).not.toBe(`ok: ${secret.length} bytes`);
    expect(outcome).toMatch(/^(denied: E[A-Z]+|launch refused)$/);
  });
});
