import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './warden.js';

// For a test file whose every test starts from the same enrolled server: the home is made once (by `make`, with
// the commands the tests used to run each time) and copied for each test; the template itself is never changed.
// A home names no path inside itself (the trust files name the server's files, the digest cache their inodes),
// so its copy is a home like the one `make` would have made there. What `make` put in servers.json that names its
// directory (an env variable pointing at a scenario or log file of the test's) is made to name the test's
// directory instead, as `add --env` would have written it there: servers.json is the only file that holds it.

export interface HomeTemplate {
  /** Copies the template to DIR/home and returns that path. */
  copyTo(dir: string): string;
}

/** Registers the hooks that make the template (beforeAll) and remove it (afterAll); call at a file's top level or
 *  in a describe. `make(dir, home)` enrolls into `home` (DIR/home), naming files of `dir` as a test would. */
export function homeTemplate(make: (dir: string, home: string) => void): HomeTemplate {
  let dir = '';
  beforeAll(() => {
    dir = tempDir('warden-template-');
    make(dir, path.join(dir, 'home'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    copyTo(to: string): string {
      const home = path.join(to, 'home');
      fs.cpSync(path.join(dir, 'home'), home, { recursive: true });
      const servers = path.join(home, 'servers.json');
      fs.writeFileSync(servers, fs.readFileSync(servers, 'utf8').replaceAll(`${dir}/`, `${to}/`));
      return home;
    },
  };
}
