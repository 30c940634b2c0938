import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli } from '../helpers/warden.js';

// Review 15, findings 1 and 3: the sandbox proposal is an allow-list. A folder of the home's configuration (a
// top-level dot-folder, or one under ~/.config) that was there before the enrollment is never proposed, whatever
// the server wrote into it; and a client configuration file `import` rewrote (listed in imports.json) is never
// reachable by a write grant, since what is written there is started by the client, outside the warden.

let dir: string;
let home: string;
let user: string;
let project: string;
let env: Record<string, string>;
let imported: ReturnType<typeof cli>;
const FOLDERS = ['.appstate', '.config/someapp'];

beforeAll(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-r15-');
  home = path.join(dir, 'home');
  user = path.join(dir, 'user');
  for (const d of FOLDERS) fs.mkdirSync(path.join(user, d), { recursive: true });
  project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const config = path.join(project, '.mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { writer: { command: NODE, args: [path.join(SERVERS, 'r15/config-folder-writer.mjs')] } } }, null, 2));
  env = { ...(process.env as Record<string, string>), HOME: user };
  imported = cli(home, ['import', config, '--yes'], { env });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('an imported server that writes into configuration folders of the home it did not create', () => {
  it('is proposed no grant over them, each write listed with the reason', () => {
    expect(imported.code, imported.stderr + imported.stdout).toBe(0);
    const p = JSON.parse(fs.readFileSync(path.join(home, 'proposals/writer.sandbox.json'), 'utf8')) as { write: string[]; notGranted: { path: string; why: string }[] };
    expect(p.write).toEqual([path.join(user, '.own-state')]);
    for (const f of ['.appstate/state.json', '.config/someapp/settings.json']) {
      const entry = p.notGranted.find((n) => n.path === path.join(user, f));
      expect(entry?.why, f).toMatch(/^wrote here, not granted: .* a folder the server did not create, where programs keep their configuration/);
    }
  });

  it('is proposed the folder of its own it created (not the home whole), and never a client configuration folder it created', () => {
    const p = JSON.parse(fs.readFileSync(path.join(home, 'proposals/writer.sandbox.json'), 'utf8')) as { created?: string[]; notGranted: { path: string; why: string }[] };
    expect(p.created).toEqual([path.join(user, '.own-state')]);
    expect(p.notGranted.find((n) => n.path === path.join(user, '.own-state/config.json'))).toBeUndefined();
    const gemini = p.notGranted.find((n) => n.path === path.join(user, '.gemini/settings.json'));
    expect(gemini?.why).toMatch(/^wrote here, not granted: the write grant \S+\/user\/\.gemini is, holds or lies inside \S+\/\.gemini, where an MCP client keeps the configuration/);
    expect(imported.stdout).toContain(`proposed: network none; writes to its data directory, a private /tmp, ${path.join(user, '.own-state')} (not there before: created, mode 0700, when applied)`);
    expect(fs.existsSync(path.join(user, '.own-state'))).toBe(false);
  });

  it('refuses a write grant over the folder of the client file import rewrote (SANDBOX_INVALID), the sandbox unchanged', () => {
    const r = cli(home, ['sandbox', 'writer', '--network', 'none', '--allow-write', project], { env });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: .*holds or lies inside \S+\/project\/\.mcp\.json, where an MCP client keeps the configuration/);
    expect(r.code).toBe(2);
    const servers = JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, { sandbox?: { write: string[] } }> };
    expect(servers.servers.writer?.sandbox).toBeUndefined();
  });

  it('accepts a write grant over a folder of the home that holds no client configuration', () => {
    const free = path.join(user, 'work');
    fs.mkdirSync(free);
    const r = cli(home, ['sandbox', 'writer', '--network', 'none', '--allow-write', free], { env });
    expect(r.code, r.stderr).toBe(0);
  });

  it('creates the folder of its own, owner-only, when the proposal is applied', () => {
    const r = cli(home, ['sandbox', 'writer', '--propose', '--yes'], { env });
    expect(r.code, r.stderr).toBe(0);
    const st = fs.lstatSync(path.join(user, '.own-state'));
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(process.getuid?.());
    expect(fs.readdirSync(path.join(user, '.own-state'))).toEqual([]);
    expect(fs.existsSync(path.join(user, '.gemini'))).toBe(false);
  });
});
