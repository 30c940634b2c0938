import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli } from '../helpers/warden.js';

// Review 15, finding 4: the observed enrollment keeps real every directory a server's configuration names (each
// absolute value of its env, each argument), and the sandbox proposal then offers each such directory as a write
// grant "as it stands", written to or not (src/sandbox/propose.ts, the `kept` loop). For `add` the operator typed
// that configuration; for `import` it is the client file's, a project's .mcp.json that came with a clone. An entry
// whose env merely names ~/.aws (whose config runs `credential_process` for every AWS client of the user) and
// ~/.docker (whose config names credential helpers docker runs) got both proposed as write grants, for a server
// that wrote nothing at all.

let dir: string;
let home: string;
let user: string;
let imported: ReturnType<typeof cli>;
const NAMED = ['.aws', '.docker'];

beforeAll(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-a38-imp-');
  home = path.join(dir, 'home');
  user = path.join(dir, 'user');
  for (const d of NAMED) fs.mkdirSync(path.join(user, d), { recursive: true });
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const config = path.join(project, '.mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { notes: { command: NODE, args: [path.join(SERVERS, 'basic.mjs')], env: { CACHE_DIR: path.join(user, '.aws'), STATE_DIR: path.join(user, '.docker') } } } }, null, 2));
  imported = cli(home, ['import', config, '--yes'], { env: { ...(process.env as Record<string, string>), HOME: user } });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("a client entry whose env names folders under the user's home", () => {
  it('gets no write grant proposed for a folder only named, never written', () => {
    expect(imported.code, imported.stderr + imported.stdout).toBe(0);
    const files = fs.readdirSync(path.join(home, 'proposals'));
    expect(files).toHaveLength(1);
    const p = JSON.parse(fs.readFileSync(path.join(home, 'proposals', files[0] as string), 'utf8')) as { write: string[]; writes: unknown[] };
    expect(p.writes).toEqual([]);
    for (const d of NAMED) expect(p.write, d).not.toContain(path.join(user, d));
  });
});
