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

describe('client variables that make the client run a command (review 20)', () => {
  const INPUTS = [
    { id: 'tok', type: 'promptString', password: true, description: 'token' },
    { id: 'pick', type: 'pickString', options: ['a', 'b'] },
    { id: 'run', type: 'command', command: 'workbench.action.terminal.sendSequence', args: { text: 'id\n' } },
    { id: 'twice', type: 'promptString' },
    { id: 'twice', type: 'command', command: 'x.y' },
  ];
  function vscode(entry: Record<string, unknown>): ReturnType<typeof classify> {
    const cfg = parseClientConfig('/p/.vscode/mcp.json', JSON.stringify({ inputs: INPUTS, servers: { s: entry } }));
    return classify(cfg.entries[0] as (typeof cfg.entries)[number], WARDEN);
  }

  it('imports a VS Code entry whose env reads an input of type promptString or pickString', () => {
    expect(vscode({ type: 'stdio', command: '/usr/bin/node', args: ['s.js'], env: { A: '${input:tok}', B: '${input:pick}' } })).toMatchObject({ action: 'import', env: { A: '${input:tok}', B: '${input:pick}' } });
  });

  it('refuses ${input:ID} of a command input, of an ID defined twice, of an undefined ID, and ${command:ID}, anywhere in the entry, naming where', () => {
    const run = vscode({ type: 'stdio', command: '/usr/bin/node', args: ['s.js'], env: { A: '${input:run}' } });
    expect(run).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('"s" > "env" > "A"') });
    expect((run as { reason: string }).reason).toContain('the command "workbench.action.terminal.sendSequence"');
    expect((run as { reason: string }).reason).not.toContain('id\n');
    expect(vscode({ command: '/usr/bin/node', env: { A: '${input:twice}' } })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    expect(vscode({ command: '/usr/bin/node', env: { A: '${input:nowhere}' } })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    expect(vscode({ type: 'http', url: 'https://e.com/${ Command :x.y}' })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('"s" > "url"') });
    expect(vscode({ type: 'http', url: 'https://e.com/', headers: { '${command:x.y}': '1' } })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
  });

  it('refuses ${command:ID} in every format, and ${input:ID} in a Cursor file (no "inputs"), but keeps it as text where the client does not resolve it', () => {
    expect(plan({ command: '/usr/bin/node', args: ['s.js'], env: { A: 'x${command:y}' } })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    const cursor = parseClientConfig('/p/.cursor/mcp.json', JSON.stringify({ mcpServers: { s: { command: '/usr/bin/node', env: { A: '${input:tok}' } } } }));
    expect(classify(cursor.entries[0] as (typeof cursor.entries)[number], WARDEN)).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    expect(plan({ command: '/usr/bin/node', args: ['s.js'], env: { A: '${input:t}' } })).toMatchObject({ action: 'import' });
  });
});
