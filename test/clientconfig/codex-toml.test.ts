import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { applySplices, sameValue } from '../../src/clientconfig/rewrite.js';
import { wrapTomlEntry } from '../../src/clientconfig/toml-rewrite.js';
import { WardenError } from '../../src/error.js';

// Codex CLI's config.toml (test/fixtures/clients/README.md): its [mcp_servers.NAME] tables read with the same
// member discipline as the JSON clients, an entry rewritten by editing only its values' characters (proved by
// parsing the result again), and the entry's table put back byte for byte for unwrap.

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = '/opt/mcp-warden/dist/cli/main.js';
const NODE = process.execPath;
/** The fixture's program: not launched here, and not the node that import writes, so the rewrite shows. */
const PROGRAM = '/opt/node/bin/node';
const FILE = '/home/u/.codex/config.toml';
const TEXT = fs.readFileSync(path.join(ROOT, 'test/fixtures/clients/codex/.codex/config.toml'), 'utf8').replaceAll('@NODE@', PROGRAM).replaceAll('@SERVERS@', '/srv/servers');
const LAUNCH = (id: string): string[] => [SCRIPT, '--home', '/h', 'run', id];

const plans = (text: string): Record<string, ReturnType<typeof classify>> => Object.fromEntries(parseClientConfig(FILE, text).entries.map((e) => [e.name, classify(e, SCRIPT, NODE)]));
const entry = (text: string, name: string): ReturnType<typeof parseClientConfig>['entries'][number] => parseClientConfig(FILE, text).entries.find((e) => e.name === name) as ReturnType<typeof parseClientConfig>['entries'][number];
const one = (body: string): ReturnType<typeof classify> => plans(`[mcp_servers.s]\n${body}\n`).s as ReturnType<typeof classify>;

describe("Codex CLI's config.toml", () => {
  it('reads each [mcp_servers.NAME] table: a local one to import (env_vars passed through), a remote one left, env_vars from a remote source refused', () => {
    expect(plans(TEXT)).toEqual({
      basic: { action: 'import', command: PROGRAM, args: ['/srv/servers/basic.mjs'], cwd: '/srv/servers', env: { API_TOKEN: 'token-from-codex', CODEX_FIXTURE_FORWARDED: '${CODEX_FIXTURE_FORWARDED}' }, wardenEnv: {} },
      'host-tools': { action: 'refused', reason: expect.stringContaining('"env_vars" reads REMOTE_TOKEN from source "remote"') },
      figma: { action: 'remote', url: 'https://mcp.figma.com/mcp' },
      inline: { action: 'import', command: PROGRAM, args: ['/srv/servers/basic.mjs'], env: {}, wardenEnv: {} },
    });
  });

  it("rewrites only the entry's command, args and cwd line, keeping every comment and other byte, and the result counts as wrapped", () => {
    const r = wrapTomlEntry(TEXT, entry(TEXT, 'basic'), NODE, LAUNCH('basic'), []);
    if ('reason' in r) throw new Error(r.reason);
    const removed = TEXT.split('\n').filter((l) => !r.text.split('\n').includes(l));
    expect(removed).toEqual([`command = "${PROGRAM}"   # the program Codex starts`, 'args = [', '  "/srv/servers/basic.mjs", # the server\'s script', ']', 'cwd = "/srv/servers"']);
    expect(r.text).toContain(`command = ${JSON.stringify(NODE)}   # the program Codex starts\n# Optional\nargs = ${JSON.stringify(LAUNCH('basic')).replaceAll(',', ', ')}\n`);
    expect(r.text).toContain('# Optional: cwd that the command will be run from\nstartup_timeout_sec = 20');
    expect(plans(r.text)).toMatchObject({ basic: { action: 'wrapped', id: 'basic', home: '/h' }, figma: { action: 'remote' } });
    expect(sameValue(r.value, { ...(entry(TEXT, 'basic').value as object), command: NODE, args: LAUNCH('basic'), cwd: undefined })).toBe(false); // cwd is gone, not undefined
    const { cwd: _, ...kept } = entry(TEXT, 'basic').value as Record<string, unknown>;
    expect(sameValue(r.value, { ...kept, command: NODE, args: LAUNCH('basic') })).toBe(true);
  });

  it("unwrap's splice of the recorded table gives the original bytes back", () => {
    const before = entry(TEXT, 'basic');
    const r = wrapTomlEntry(TEXT, before, NODE, LAUNCH('basic'), []);
    if ('reason' in r) throw new Error(r.reason);
    const now = entry(r.text, 'basic');
    expect(sameValue(now.value, r.value)).toBe(true);
    expect(applySplices(r.text, [{ offset: now.offset, length: now.length, text: before.text }])).toBe(TEXT);
    expect(before.text.startsWith('[mcp_servers.basic]\n') && before.text.endsWith('enabled_tools = ["echo", "env"]\n')).toBe(true);
  });

  it('adds args under command when the entry has none, and writes a quoted table name as TOML', () => {
    const text = '[mcp_servers."my server"]\ncommand = "/usr/bin/node" # no args\n';
    const r = wrapTomlEntry(text, entry(text, 'my server'), NODE, LAUNCH('my-server'), []);
    if ('reason' in r) throw new Error(r.reason);
    expect(r.text).toBe(`[mcp_servers."my server"]\ncommand = ${JSON.stringify(NODE)} # no args\nargs = ${JSON.stringify(LAUNCH('my-server')).replaceAll(',', ', ')}\n`);
  });

  it('a table written inside a multi-line string or a comment is not the entry: only the real one is rewritten', () => {
    const text = `notes = """\n[mcp_servers.s]\ncommand = "/decoy"\n"""\n# [mcp_servers.s]\n[mcp_servers.s]\ncommand = '/usr/bin/node'\n`;
    const r = wrapTomlEntry(text, entry(text, 's'), NODE, LAUNCH('s'), []);
    if ('reason' in r) throw new Error(r.reason);
    expect(r.text.startsWith(`notes = """\n[mcp_servers.s]\ncommand = "/decoy"\n"""\n# [mcp_servers.s]\n[mcp_servers.s]\ncommand = ${JSON.stringify(NODE)}\n`)).toBe(true);
  });

  it('refuses, before anything is enrolled, an entry written as dotted keys or an inline table, saying how to write it', () => {
    for (const text of ['mcp_servers.s.command = "/usr/bin/node"\n', 'mcp_servers = { s = { command = "/usr/bin/node" } }\n', '[mcp_servers]\ns = { command = "/usr/bin/node" }\n']) {
      const e = entry(text, 's');
      expect(classify(e, SCRIPT, NODE)).toMatchObject({ action: 'import' });
      expect(wrapTomlEntry(text, e, NODE, LAUNCH('s'), [])).toEqual({ reason: expect.stringContaining('write it as a table of its own, [mcp_servers.s]') });
    }
  });

  it('moves a variable the warden reads itself only from a line of the entry table, and refuses an inline env holding one', () => {
    const lines = '[mcp_servers.s]\ncommand = "/usr/bin/node"\nenv.NODE_EXTRA_CA_CERTS = "/etc/ca.pem" # corporate CA\nenv.A = "1"\n';
    expect(plans(lines).s).toMatchObject({ action: 'import', env: { A: '1' }, wardenEnv: { NODE_EXTRA_CA_CERTS: '/etc/ca.pem' } });
    const r = wrapTomlEntry(lines, entry(lines, 's'), NODE, LAUNCH('s'), ['NODE_EXTRA_CA_CERTS']);
    if ('reason' in r) throw new Error(r.reason);
    expect(r.text).not.toContain('NODE_EXTRA_CA_CERTS');
    expect(r.text).toContain('env.A = "1"\n');
    const inline = '[mcp_servers.s]\ncommand = "/usr/bin/node"\nenv = { NODE_EXTRA_CA_CERTS = "/etc/ca.pem" }\n';
    expect(wrapTomlEntry(inline, entry(inline, 's'), NODE, LAUNCH('s'), ['NODE_EXTRA_CA_CERTS'])).toEqual({ reason: expect.stringContaining('not as a line "env.NODE_EXTRA_CA_CERTS = ..."') });
  });

  it('the allow-list: timeouts, switches, tool filters and approvals kept; http_headers_helper, environment_id, experimental_environment and unknown members refused', () => {
    expect(one('command = "/usr/bin/node"\nstartup_timeout_ms = 5000\nrequired = true\ndisabled_tools = ["x"]\nsupports_parallel_tool_calls = true\ndefault_tools_approval_mode = "prompt"\nname = "Label"')).toMatchObject({ action: 'import' });
    expect(one('url = "https://e.com/mcp"\nbearer_token = "t"\nauth = "oauth"\nscopes = ["a"]\noauth = { client_id = "c" }\noauth_resource = "r"')).toMatchObject({ action: 'remote' });
    expect(one('url = "https://e.com/mcp"\nhttp_headers_helper = "/bin/sh -c \'echo {}\'"')).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('Codex runs it as a command on this machine') });
    expect(one('command = "/usr/bin/node"\nenvironment_id = "devbox"')).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('another executor') });
    expect(one('command = "/usr/bin/node"\nexperimental_environment = "remote"')).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('remote executor') });
    expect(one('command = "/usr/bin/node"\nheaders = {}')).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('carries "headers"') });
    expect(one('command = "/usr/bin/node"\nurl = "https://e.com/mcp"')).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
  });

  it('env_vars naming a variable the warden reads itself or a loader refuses the entry, to import or already wrapped', () => {
    const wrapped = (extra: string): string => `command = ${JSON.stringify(NODE)}\nargs = ${JSON.stringify(LAUNCH('s'))}\n${extra}`;
    expect(one(wrapped(''))).toEqual({ action: 'wrapped', id: 's', home: '/h' });
    for (const name of ['MCP_WARDEN_HOME', 'NODE_OPTIONS', 'LD_PRELOAD', 'HTTPS_PROXY']) {
      expect(one(`command = "/usr/bin/node"\nenv_vars = ["${name}"]`)).toMatchObject({ action: 'refused', reason: expect.stringContaining(`"env_vars" passes ${name}`) });
      expect(one(wrapped(`env_vars = [{ name = "${name}" }]`))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining(`"env_vars" passes ${name}`) });
    }
    expect(one('command = "/usr/bin/node"\nenv = { A = "1" }\nenv_vars = ["A"]')).toMatchObject({ action: 'refused', reason: expect.stringContaining('A is both in "env" and in "env_vars"') });
  });

  it('a member named "__proto__" refuses the entry here too', () => {
    expect(one('command = "/usr/bin/node"\nenv = { "__proto__" = "x" }')).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('"__proto__"') });
  });

  it('refuses a file that is not TOML, or has no mcp_servers table, with CLIENT_CONFIG_INVALID and the line', () => {
    for (const [text, says] of [['[mcp_servers.s]\ncommand = \n', 'is not valid TOML at line 2'], ['model = "x"\n', 'has no "mcp_servers" table'], ['mcp_servers = 1\n', '"mcp_servers" is not a table']] as const) {
      let err: unknown;
      try {
        parseClientConfig(FILE, text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(WardenError);
      expect((err as WardenError).code).toBe('CLIENT_CONFIG_INVALID');
      expect((err as WardenError).message).toContain(says);
    }
  });
});
