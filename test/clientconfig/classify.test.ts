import { describe, expect, it } from 'vitest';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';

// What import decides for one entry, on entries written the way clients document them.

const WARDEN = '/opt/mcp-warden/dist/cli/main.js';

function plan(entry: Record<string, unknown>): ReturnType<typeof classify> {
  const cfg = parseClientConfig('/home/u/.config/Claude/claude_desktop_config.json', JSON.stringify({ mcpServers: { s: entry } }));
  return classify(cfg.entries[0] as (typeof cfg.entries)[number], WARDEN);
}

describe('classifying a client entry', () => {
  it('imports a plain stdio entry with its env and an absolute cwd', () => {
    expect(plan({ command: '/usr/bin/node', args: ['server.js'], cwd: '/srv/s', env: { A: '1' } })).toEqual({ action: 'import', command: '/usr/bin/node', args: ['server.js'], cwd: '/srv/s', env: { A: '1' }, wardenEnv: {} });
  });

  it("moves the variables the warden reads itself out of the client's env, and refuses one given as a client variable", () => {
    expect(plan({ command: '/usr/bin/node', args: ['s.js'], env: { API_TOKEN: '${input:t}', NODE_TLS_REJECT_UNAUTHORIZED: '0', HTTPS_PROXY: 'http://p:3128', XDG_CONFIG_HOME: '/x' } })).toMatchObject({
      action: 'import',
      env: { API_TOKEN: '${input:t}' },
      wardenEnv: { NODE_TLS_REJECT_UNAUTHORIZED: '0', HTTPS_PROXY: 'http://p:3128', XDG_CONFIG_HOME: '/x' },
    });
    expect(plan({ command: '/usr/bin/node', args: ['s.js'], env: { MCP_WARDEN_HOME: '${workspaceFolder}/.warden' } })).toMatchObject({ action: 'refused', reason: expect.stringContaining('"env" sets MCP_WARDEN_HOME from a client variable') });
  });

  it('refuses a relative cwd, which only the client could resolve', () => {
    expect(plan({ command: '/usr/bin/node', args: ['server.js'], cwd: 'srv' })).toMatchObject({ action: 'refused', reason: expect.stringContaining('"cwd" "srv" is relative') });
  });

  it('refuses client variables in the command line', () => {
    expect(plan({ command: '/usr/bin/node', args: ['${workspaceFolder}/server.js'] })).toMatchObject({ action: 'refused', reason: expect.stringContaining('client variables') });
  });

  it('offers to install a plain npx entry, and refuses the -p form it cannot read', () => {
    expect(plan({ command: 'npx', args: ['-y', '@scope/server@1.2.3', '--flag'] })).toMatchObject({ action: 'npx', pkg: '@scope/server@1.2.3', args: ['--flag'] });
    expect(plan({ command: 'npx', args: ['-p', 'pkg', 'bin'] })).toMatchObject({ action: 'refused', reason: expect.stringContaining('npx') });
  });

  it('recognizes an entry already launching this warden, and not another tool that happens to have a dist/cli/main.js', () => {
    expect(plan({ command: process.execPath, args: [WARDEN, '--home', '/h', 'run', 'fs'] })).toEqual({ action: 'wrapped', id: 'fs', home: '/h' });
    expect(plan({ command: WARDEN, args: ['run', 'fs'] })).toEqual({ action: 'wrapped', id: 'fs' });
    // Another file named mcp-warden is not this warden: it is named, and left for the user to fix.
    expect(plan({ command: '/usr/local/bin/mcp-warden', args: ['run', 'fs'] })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    expect(plan({ command: '/usr/bin/node', args: ['/opt/other/dist/cli/main.js', 'run', 'x'] })).toMatchObject({ action: 'import' });
  });

  it('leaves remote entries to the client', () => {
    expect(plan({ url: 'https://example.com/mcp' })).toEqual({ action: 'remote', url: 'https://example.com/mcp' });
    expect(plan({ type: 'sse', url: 'http://localhost:3000/sse' })).toMatchObject({ action: 'remote' });
  });

  it('a command whose file name is a member of Object.prototype (valueOf, toString, __proto__) is planned like any other, not a crash', () => {
    for (const name of ['valueOf', 'toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      expect(plan({ command: `/usr/local/bin/${name}`, args: ['run', 'fs'] })).toMatchObject({ action: 'import', command: `/usr/local/bin/${name}` });
    }
  });
});
