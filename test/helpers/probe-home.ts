import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { copyOfRunTemplate } from './run-template.js';
import { NODE, SERVERS, cli } from './warden.js';

// The set-up of the sandbox tests that launch the hostile test/servers/sandbox-probe.mjs under bubblewrap
// (test/sandbox/confinement, decoys, egress, proposal-network): a scratch tree under /var/tmp, not /tmp (the
// sandbox gives the server a private /tmp, which would hide a tree there whatever the sandbox says of the home),
// with a user's HOME holding a private key, and a warden home with the probe enrolled, copied from one run
// template (one `add` a run for all of them).

export const PROBE = path.join(SERVERS, 'sandbox-probe.mjs');

/** Fails the file unless bubblewrap is installed (call in beforeAll): a missing engine is not a passed test. */
export function requireBwrap(): void {
  if (!['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((f) => fs.existsSync(f))) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
}

export interface ProbeDir {
  /** The scratch tree, /var/tmp/PREFIXxxxxxx. */
  dir: string;
  /** dir/home: the warden's home (made by enrollProbe, or by the test's first command). */
  home: string;
  /** dir/user: the HOME of the warden's environment, with ~/.ssh/id_rsa ("PRIVATE KEY\n", mode 0600). */
  user: string;
  /** The test's environment with HOME=user. */
  env: Record<string, string>;
}

/** A fresh scratch tree under /var/tmp with a user's HOME holding ~/.ssh/id_rsa; the test removes `dir`. */
export function probeDir(prefix: string): ProbeDir {
  const dir = fs.mkdtempSync(path.join('/var/tmp', prefix));
  const user = path.join(dir, 'user');
  fs.mkdirSync(path.join(user, '.ssh'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(user, '.ssh/id_rsa'), 'PRIVATE KEY\n', { mode: 0o600 });
  return { dir, home: path.join(dir, 'home'), user, env: { ...(process.env as Record<string, string>), HOME: user } };
}

/** Puts in `p.home` a home with the probe enrolled as 'probe' (`add probe --yes -- NODE PROBE`, no sandbox yet):
 *  a copy of the run's template. */
export function enrollProbe(p: ProbeDir): void {
  copyOfRunTemplate(`sandbox probe: add probe ${NODE} ${PROBE}`, (d) => {
    const add = cli(path.join(d, 'home'), ['add', 'probe', '--yes', '--', NODE, PROBE], { env: p.env });
    expect(add.code, add.stderr).toBe(0);
  }, p.dir);
}

/** For the whole file (call at its top level): the probe enrolled in `home` (enrollProbe) and `outside`, an empty
 *  folder of the same /var/tmp tree for the files a test denies the probe, removed after the file. */
export function probeWithOutside(prefix: string): { readonly home: string; readonly outside: string } {
  const dirs = { home: '', outside: '' };
  let dir = '';
  beforeAll(() => {
    const p = probeDir(prefix);
    dir = p.dir;
    enrollProbe(p);
    dirs.home = p.home;
    dirs.outside = path.join(dir, 'outside');
    fs.mkdirSync(dirs.outside);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dirs;
}

/** The text each tool call of one session answered, in order, and the warden's stderr: the session is opened by
 *  `connect`, `during` runs after the calls, and the client is closed (the warden's reports read to the end)
 *  before this resolves. The sandbox tests' one shape of a probe session. */
export async function callsOnOneSession(connect: () => Promise<{ client: Client; stderr: () => string }>, calls: [string, Record<string, unknown>][], during: () => Promise<void> = async () => {}): Promise<{ out: string[]; stderr: string }> {
  const { client, stderr } = await connect();
  const out: string[] = [];
  try {
    for (const [name, args] of calls) out.push(((await client.callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]?.text ?? '');
    await during();
  } finally {
    await client.close();
  }
  return { out, stderr: stderr() };
}
