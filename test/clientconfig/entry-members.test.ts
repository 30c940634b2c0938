import { describe, expect, it } from 'vitest';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig, type ClientKind as AnyKind } from '../../src/clientconfig/read.js';

// Review 19: the members an entry may carry are an allow-list per format and transport (src/clientconfig/
// members.ts). Honest entries as each client documents them are handled as before; any other member (VS Code's
// "dev", Claude Code's "headersHelper", one no client has yet) refuses the entry, local, already wrapped or remote.

const WARDEN = '/opt/mcp-warden/dist/cli/main.js';
/** The JSON formats (Codex's TOML file: test/clientconfig/codex-toml.test.ts). */
type ClientKind = Exclude<AnyKind, 'codex'>;
const FILES: Record<ClientKind, { file: string; map: string }> = {
  'claude-desktop': { file: '/home/u/.config/Claude/claude_desktop_config.json', map: 'mcpServers' },
  'claude-code': { file: '/p/.mcp.json', map: 'mcpServers' },
  'claude-code-user': { file: '/home/u/.claude.json', map: 'mcpServers' },
  cursor: { file: '/p/.cursor/mcp.json', map: 'mcpServers' },
  vscode: { file: '/p/.vscode/mcp.json', map: 'servers' },
  'mcp-servers': { file: '/home/u/.codeium/windsurf/mcp_config.json', map: 'mcpServers' },
};
const KINDS = Object.keys(FILES) as ClientKind[];

function plan(kind: ClientKind, entry: Record<string, unknown>): ReturnType<typeof classify> {
  const { file, map } = FILES[kind];
  const cfg = parseClientConfig(file, JSON.stringify({ [map]: { s: entry } }));
  expect(cfg.kind).toBe(kind);
  return classify(cfg.entries[0] as (typeof cfg.entries)[number], WARDEN);
}

const LOCAL = { command: '/usr/bin/node', args: ['server.js'] };
const WRAPPED = { command: WARDEN, args: ['run', 's'] };
const REMOTE = { type: 'http', url: 'https://example.com/mcp' };

/** Documented members of each format that neither start a program nor change a launch. */
const HONEST: Record<ClientKind, { local: Record<string, unknown>; remote: Record<string, unknown> }> = {
  'claude-desktop': { local: { env: { A: '1' } }, remote: { headers: { Authorization: 'Bearer x' } } },
  'claude-code': { local: { type: 'stdio', env: { A: '${A}' } }, remote: { headers: { 'X-Key': '${KEY}' }, oauth: { clientId: 'c', callbackPort: 8080 } } },
  'claude-code-user': { local: { type: 'stdio' }, remote: { headers: {}, oauth: { clientId: 'c' } } },
  cursor: { local: { type: 'stdio', env: {} }, remote: { headers: {}, auth: { CLIENT_ID: 'c', scopes: ['read'] } } },
  vscode: { local: { type: 'stdio', version: '1.0.0', gallery: 'https://api.mcp.github.com/v0/servers/x' }, remote: { headers: {}, oauth: { clientId: 'c' }, version: '1.0.0', gallery: true } },
  'mcp-servers': {
    local: { disabled: false, timeout: 30000, autoApprove: ['read'], alwaysAllow: [], disabledTools: [], includeTools: ['a'], excludeTools: ['b'], trust: false, description: 'notes' },
    remote: { serverUrl: 'https://example.com/mcp', headers: {}, disabled: false, oauth: {}, authProviderType: 'dynamic_discovery' },
  },
};

const refusedFor = (kind: ClientKind, member: string) => ({
  action: 'refused',
  code: 'CLIENT_ENTRY_AMBIGUOUS',
  reason: expect.stringMatching(new RegExp(`^the entry "s" of ${FILES[kind].file.replaceAll('.', '\\.')} carries "${member}": .*: remove "${member}" from the entry, then import again$`)),
});

describe('the members an entry may carry, per client format', () => {
  it.each(KINDS)('%s: the documented members are kept (local imported, wrapped already, remote left)', (kind) => {
    expect(plan(kind, { ...LOCAL, ...HONEST[kind].local })).toMatchObject({ action: 'import', command: '/usr/bin/node' });
    expect(plan(kind, { ...WRAPPED, ...HONEST[kind].local })).toEqual({ action: 'wrapped', id: 's' });
    expect(plan(kind, { ...REMOTE, ...HONEST[kind].remote })).toMatchObject({ action: 'remote' });
  });

  it.each(KINDS)('%s: a member on no list refuses the entry, whether local, already wrapped or remote, naming file, entry and member', (kind) => {
    for (const base of [LOCAL, WRAPPED, REMOTE]) expect(plan(kind, { ...base, onStart: 'x' })).toEqual(refusedFor(kind, 'onStart'));
  });

  it('VS Code "dev" (a debugger on the command, or restarts) and "sandboxEnabled" refuse the entry, local, wrapped or remote', () => {
    for (const base of [LOCAL, WRAPPED, REMOTE]) expect(plan('vscode', { ...base, dev: { debug: { type: 'node' } } })).toEqual(refusedFor('vscode', 'dev'));
    expect(plan('vscode', { ...LOCAL, dev: { watch: '**/*.js' } })).toMatchObject({ reason: expect.stringContaining('--inspect-brk') });
    expect(plan('vscode', { ...LOCAL, sandboxEnabled: true })).toEqual(refusedFor('vscode', 'sandboxEnabled'));
  });

  it('a "headersHelper" refuses a remote entry in every format, saying the client runs it outside the warden', () => {
    for (const kind of KINDS) expect(plan(kind, { ...REMOTE, headersHelper: '/bin/sh -c "echo {}"' })).toEqual(refusedFor(kind, 'headersHelper'));
    expect(plan('claude-code', { ...REMOTE, headersHelper: 'x' })).toMatchObject({ reason: expect.stringContaining('runs it as a shell command on this machine at each connection, outside the warden') });
  });

  it("a member kept by one format or transport is refused in another (the lists are per format, not one list)", () => {
    expect(plan('claude-desktop', { ...LOCAL, version: '1.0.0' })).toEqual(refusedFor('claude-desktop', 'version'));
    expect(plan('claude-code', { ...LOCAL, disabled: true })).toEqual(refusedFor('claude-code', 'disabled'));
    expect(plan('vscode', { ...LOCAL, headers: {} })).toEqual(refusedFor('vscode', 'headers'));
    expect(plan('cursor', { ...REMOTE, oauth: {} })).toEqual(refusedFor('cursor', 'oauth'));
  });

  it('an entry of a project of ~/.claude.json is held to the same list', () => {
    const cfg = parseClientConfig(FILES['claude-code-user'].file, JSON.stringify({ projects: { '/p': { mcpServers: { s: { ...REMOTE, headersHelper: 'x' } } } } }));
    expect(classify(cfg.entries[0] as (typeof cfg.entries)[number], WARDEN)).toEqual(refusedFor('claude-code-user', 'headersHelper'));
  });
});
