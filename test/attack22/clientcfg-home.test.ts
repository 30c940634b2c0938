import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, WARDEN, auditEvents, cli, perTestDirs } from '../helpers/warden.js';

// Issue 26, item 5: a client entry's "env" is the environment the client starts the warden with. An entry that
// sets MCP_WARDEN_HOME, XDG_CONFIG_HOME or HOME to a home the attacker shipped (its own servers.json, allowlist
// and lock for the same server id) must not move the warden there: `import` writes --home, and the variables
// the warden reads itself leave the client's entry for the server's servers.json entry.

const tmp = perTestDirs();
const BASIC = path.join(SERVERS, 'basic.mjs');
const ATTACKER = path.join(SERVERS, 'attack22/clientcfg-attacker.mjs');

interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The user's account: its HOME, and the default warden home an `import` with no --home uses there. */
function user(): { home: string; wardenHome: string } {
  const home = path.join(tmp.dir, 'user');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  return { home, wardenHome: path.join(home, '.config', 'mcp-warden') };
}

/** A home the attacker ships in the project, enrolling server `id` as its own script (which leaves `marker`). */
function attackerHome(home: string, id: string, marker: string): void {
  const r = cli(home, ['add', id, '--yes', '--', NODE, ATTACKER, marker]);
  expect(r.code, r.stderr).toBe(0);
  fs.rmSync(marker, { force: true }); // add launched it once to lock it; what counts is what a client launch runs
}

/** `import` as the user runs it: no --home, no MCP_WARDEN_HOME or XDG_CONFIG_HOME, the user's HOME. */
function importAsUser(file: string, userHome: string): { code: number | null; entries: { name: string; result: string; detail?: string }[] } {
  const r = spawnSync(NODE, [WARDEN, 'import', file, '--yes', '--json'], { env: { PATH: '/usr/bin:/bin', HOME: userHome }, encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).not.toContain('internal error');
  return { code: r.status, entries: (JSON.parse(r.stdout || '{"entries":[]}') as { entries: { name: string; result: string; detail?: string }[] }).entries };
}

/** Starts the entry as a client does: its command and args, its env over the client's own minimal environment. */
async function launchAsClient(entry: Entry, userHome: string): Promise<{ tools: string[]; env: (name: string) => Promise<string | null> }> {
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: { PATH: '/usr/bin:/bin', HOME: userHome, ...entry.env }, stderr: 'pipe' });
  const client = new Client({ name: 'clientcfg-home', version: '1.0.0' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  return {
    tools,
    env: async (name) => {
      const r = (await client.callTool({ name: 'env', arguments: { name } })) as { content: { text: string }[] };
      await client.close();
      return (JSON.parse(r.content[0]?.text ?? '{}') as Record<string, string | null>)[name] ?? null;
    },
  };
}

describe("a client entry's env cannot move the warden to another home", () => {
  it.each([
    ['MCP_WARDEN_HOME', (repo: string) => ({ value: path.join(repo, '.warden'), home: path.join(repo, '.warden') })],
    ['XDG_CONFIG_HOME', (repo: string) => ({ value: path.join(repo, 'xdg'), home: path.join(repo, 'xdg', 'mcp-warden') })],
    ['HOME', (repo: string) => ({ value: path.join(repo, 'fakehome'), home: path.join(repo, 'fakehome', '.config', 'mcp-warden') })],
  ])('an entry setting %s to a shipped home runs, after import, against the home import used, and the server still gets the value', async (name, where) => {
    const me = user();
    const repo = path.join(tmp.dir, 'repo');
    const { value, home: shipped } = where(repo);
    const marker = path.join(tmp.dir, 'attacker-ran');
    attackerHome(shipped, 'fs', marker);
    const shippedEvents = auditEvents(shipped).length;
    const file = path.join(repo, '.mcp.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { fs: { command: NODE, args: [BASIC], env: { [name]: value, GREETING: 'hi' } } } }, null, 2));
    const original = fs.readFileSync(file);

    const r = importAsUser(file, me.home);
    expect(r.code).toBe(0);
    expect(r.entries.map((e) => [e.name, e.result])).toEqual([['fs', 'imported']]);
    const entry = (JSON.parse(fs.readFileSync(file, 'utf8')) as { mcpServers: Record<string, Entry> }).mcpServers.fs as Entry;
    const session = await launchAsClient(entry, me.home);
    expect(session.tools).toEqual(['echo', 'env']); // the reviewed server, not the shipped home's
    expect(fs.existsSync(marker)).toBe(false);
    expect(auditEvents(shipped).length).toBe(shippedEvents); // no warden ever opened the shipped home
    expect(await session.env(name)).toBe(value); // the server is still given what its entry set

    expect(entry.args).toEqual([WARDEN, '--home', me.wardenHome, 'run', 'fs']);
    expect(entry.env).toEqual({ GREETING: 'hi' }); // what the warden reads itself left the client's entry
    const servers = (JSON.parse(fs.readFileSync(path.join(me.wardenHome, 'servers.json'), 'utf8')) as { servers: Record<string, { env: Record<string, string>; passEnv: string[] }> }).servers;
    expect(servers.fs).toMatchObject({ env: { [name]: value }, passEnv: ['GREETING'] });

    const back = spawnSync(NODE, [WARDEN, 'unwrap', file], { env: { PATH: '/usr/bin:/bin', HOME: me.home }, encoding: 'utf8' });
    expect(back.status, back.stderr).toBe(0);
    expect(fs.readFileSync(file)).toEqual(original);
  }, 60_000);
});
