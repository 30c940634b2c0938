import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServerWarm } from '../helpers/warm-digest.js';
import { NODE, SERVERS, auditEvents, cli, connectClient, tempDir } from '../helpers/warden.js';

// review 12: `read.deny` hides a path by mounting over it (an empty tmpfs, or /dev/null for a file) in the
// server's mount namespace (src/sandbox/plan.ts, `hide`). A mount over a name is not a property of the name: when
// the host replaces the file the usual way (write a temporary, rename it over: editors, secret rotation, `sed
// -i`), the kernel (since 3.18) detaches mounts that sat on the replaced dentry in every other namespace, and the
// running server reads the new file. A deny path that does not exist at launch is not hidden at all
// (`kindOf` undefined: no mount), so a file created there later is read as well. Asserts that a denied path stays
// unreadable for the whole session, whatever the host does to it.
// The fix (docs/adr/0050-sandbox-engine.md, addendum "read.deny for the session"): a deny path missing at launch
// refuses the launch, and `run` watches each denied name (and the directories on its way) and ends the session
// when the host replaces, creates or removes one, so the server is never left running with the hiding undone.
// (The reviewer's version read the file after the rename and expected EACCES; with a session ended, the proof is
// the end itself, its audit event and its stderr line: a read issued after the rename would race the watcher.)

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
  const set = cli(home, ['sandbox', 'probe', '--network', 'none', '--allow-read', projects, '--deny-read', path.join(projects, '.env')]);
  expect(set.code, set.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a read.deny path', () => {
  it('replaced by rename on the host ends the session, with a sandbox_deny_replaced event and a stderr line naming it', async () => {
    const { client, stderr } = await connectClient(home, 'probe');
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    const env = path.join(projects, '.env');
    try {
      const first = ((await client.callTool({ name: 'read', arguments: { path: env } })) as { content: { text: string }[] }).content[0]?.text;
      expect(first).toBe('denied: EACCES');
      // The host rotates the secret the way editors and tools write: a temporary file renamed over the old one.
      fs.writeFileSync(path.join(projects, '.env.tmp'), 'TOKEN=rotated-secret\n');
      fs.renameSync(path.join(projects, '.env.tmp'), env);
      await closed;
    } finally {
      await client.close();
    }
    expect(stderr()).toContain(`its read.deny path ${env} (or a directory on its way) was replaced`);
    expect(auditEvents(home).filter((e) => e.event === 'sandbox_deny_replaced')).toEqual([expect.objectContaining({ server: 'probe', path: env })]);
    expect(auditEvents(home).filter((e) => e.event === 'exit').at(-1)).toMatchObject({ cause: 'verification_failed' });
  });

  it('missing at launch refuses the launch (SANDBOX_UNAVAILABLE) naming it, and `sandbox <id>` shows it not launchable: a file created there later would have no mount over it', () => {
    const later = path.join(projects, 'later.env');
    expect(cli(home, ['sandbox', 'probe', '--deny-read', later]).code).toBe(0);
    // The neighbour (fix of review 12): `sandbox <id>` says so before any launch.
    const view = JSON.parse(cli(home, ['sandbox', 'probe', '--json']).stdout);
    expect(view).toMatchObject({ launchable: false, engine: { code: 'SANDBOX_UNAVAILABLE' } });
    expect(view.engine.message).toContain(`the read.deny path ${later} does not exist`);
    const r = cli(home, ['run', 'probe']);
    expect(r.stderr).toMatch(/SANDBOX_UNAVAILABLE: /);
    expect(r.stderr).toContain(`the read.deny path ${later} does not exist`);
    expect(r.code).toBe(3);
  });
});
