import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeWithOutside } from '../helpers/probe-home.js';
import { auditEvents, cli, connectClient } from '../helpers/warden.js';

// review 16: read.deny is planned on the realpath of the deny path's directory (sandbox/deny-plan.ts deniedNames):
// a deny path through a link (/srv/app/current/.env, `current` -> releases/v1, the usual deploy layout) hides
// /srv/app/releases/v1/.env and watches that name and those above it (sandbox/deny-watch.ts). The link itself is
// a name of the host's under the root bind, neither rebuilt nor watched: a deploy that re-points it (`ln -sfn`,
// a rename of a new link over it) makes the configured deny path name a file the sandbox shows, in the same
// session. The threat model claims a deny path replaced on the host is refused after the rename, or the session
// ends (sandbox_deny_replaced) when a name above it is replaced.

const t = probeWithOutside('warden-deny-link-');

describe('a read.deny path through a link under the root bind', () => {
  it('re-pointed on the host (a deploy) does not show the file now at the denied path: the session ends with sandbox_deny_replaced', async () => {
    fs.mkdirSync(path.join(t.outside, 'releases', 'v1'), { recursive: true });
    fs.mkdirSync(path.join(t.outside, 'releases', 'v2'), { recursive: true });
    fs.writeFileSync(path.join(t.outside, 'releases', 'v1', '.env'), 'TOKEN=first\n');
    fs.symlinkSync('releases/v1', path.join(t.outside, 'current'));
    const denied = path.join(t.outside, 'current', '.env');
    const set = cli(t.home, ['sandbox', 'probe', '--network', 'none', '--deny-read', denied]);
    expect(set.code, set.stderr).toBe(0);
    const { client } = await connectClient(t.home, 'probe');
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    const read = async (p: string): Promise<string> => ((await client.callTool({ name: 'read', arguments: { path: p } })) as { content: { text: string }[] }).content[0]?.text ?? '';
    try {
      expect(await read(denied)).toBe('denied: EACCES');
      // The deploy: the next release's secret, and the link re-pointed by renaming a new link over it.
      const secret = 'TOKEN=second-release\n';
      fs.writeFileSync(path.join(t.outside, 'releases', 'v2', '.env'), secret);
      fs.symlinkSync('releases/v2', path.join(t.outside, 'current.new'));
      fs.renameSync(path.join(t.outside, 'current.new'), path.join(t.outside, 'current'));
      const after = await read(denied).catch(() => 'session ended');
      expect(after).not.toBe(`ok: ${secret.length} bytes`);
      await closed;
    } finally {
      await client.close();
    }
    expect(auditEvents(t.home).filter((e) => e.event === 'sandbox_deny_replaced')).toEqual([expect.objectContaining({ server: 'probe' })]);
  });
});
