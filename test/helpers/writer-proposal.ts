import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { cli, type CliResult } from './warden.js';

// The set-up of the tests of the sandbox proposal against a server that writes where it must not be granted
// (test/attack36/session-dirs-proposal, attack38/proposal-client-configs, attack39/proposal-project-configs): a
// user's home holding the folders any such machine has, the writer enrolled by `add --yes` with that HOME (the
// enrollment launch observes its writes and proposes a sandbox), and the proposal it wrote read back.

export interface EnrolledWriter {
  /** The scratch tree, under /var/tmp (the sandbox gives the server a private /tmp). */
  readonly dir: string;
  readonly home: string;
  /** The HOME of the add, holding `folders`. */
  readonly user: string;
  /** The test's environment with HOME=user. */
  readonly env: Record<string, string>;
  /** What `add` answered. */
  readonly added: CliResult;
  /** The proposal the enrollment wrote, home/proposals/ID.sandbox.json, parsed. */
  proposal<T>(): T;
}

/** For the whole file (call at its top level): `folders` (relative to the user's home) made, then `add ID --yes --
 *  COMMAND` run with HOME=user; `command(user)` gives the command line, and may place files in the home first.
 *  Removed after the file. */
export function enrolledWriter(prefix: string, id: string, folders: string[], command: (user: string) => string[]): EnrolledWriter {
  const made = { dir: '', home: '', user: '', env: {} as Record<string, string>, added: { code: null, stdout: '', stderr: '' } as CliResult };
  beforeAll(() => {
    made.dir = fs.mkdtempSync(path.join('/var/tmp', prefix));
    made.home = path.join(made.dir, 'home');
    made.user = path.join(made.dir, 'user');
    for (const d of folders) fs.mkdirSync(path.join(made.user, d), { recursive: true });
    made.env = { ...(process.env as Record<string, string>), HOME: made.user };
    made.added = cli(made.home, ['add', id, '--yes', '--', ...command(made.user)], { env: made.env });
  });
  afterAll(() => fs.rmSync(made.dir, { recursive: true, force: true }));
  return {
    get dir() { return made.dir; },
    get home() { return made.home; },
    get user() { return made.user; },
    get env() { return made.env; },
    get added() { return made.added; },
    proposal: <T>() => JSON.parse(fs.readFileSync(path.join(made.home, 'proposals', `${id}.sandbox.json`), 'utf8')) as T,
  };
}
