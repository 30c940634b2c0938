import { describe, expect, it } from 'vitest';
import { refuseClientCommands } from '../../src/clientconfig/client-commands.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { WardenError } from '../../src/error.js';

// Review 20, noticed. Gemini CLI's settings.json holds, beside "mcpServers", members that make Gemini CLI run a
// command of its own that gives the model tools or starts an MCP server (settingsSchema.ts: tools.discoveryCommand,
// tools.callCommand, mcp.serverCommand; before January 2026 the same at the top level: toolDiscoveryCommand,
// toolCallCommand, mcpServerCommand). Import wrapped the file's servers and left those running outside the warden.
// And a file named like no known client holding both "servers" and "mcpServers" was read as an "mcpServers" file,
// its "servers" (VS Code's user-level mcp.json) never reported.

const GEMINI = '/home/u/.gemini/settings.json';
const SERVERS = { mcpServers: { notes: { command: '/usr/bin/node', args: ['/srv/notes.mjs'] } } };

function refusal(file: string, settings: object): WardenError {
  let err: unknown;
  try {
    refuseClientCommands(parseClientConfig(file, JSON.stringify(settings)));
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(WardenError);
  return err as WardenError;
}

describe("a client file whose own settings make the client run a command that gives tools or starts a server", () => {
  it.each([
    [{ toolDiscoveryCommand: 'bin/get_tools' }, '"toolDiscoveryCommand"'],
    [{ toolCallCommand: 'bin/call_tool' }, '"toolCallCommand"'],
    [{ mcpServerCommand: 'bin/mcp' }, '"mcpServerCommand"'],
    [{ tools: { discoveryCommand: 'bin/get_tools' } }, '"tools" > "discoveryCommand"'],
    [{ tools: { callCommand: 'bin/call_tool' } }, '"tools" > "callCommand"'],
    [{ mcp: { serverCommand: 'bin/mcp' } }, '"mcp" > "serverCommand"'],
  ])('%j refuses the whole file with CLIENT_CONFIG_INVALID naming the member', (extra, named) => {
    const err = refusal(GEMINI, { ...extra, ...SERVERS });
    expect(err.code).toBe('CLIENT_CONFIG_INVALID');
    expect(err.message).toContain(`${GEMINI}: ${named}`);
    expect(err.message).toContain('Nothing was changed.');
  });

  it('passes a Gemini CLI file whose settings start nothing (other tools settings, mcp.allowed)', () => {
    expect(() => refuseClientCommands(parseClientConfig(GEMINI, JSON.stringify({ tools: { core: ['ls'] }, mcp: { allowed: ['notes'] }, ...SERVERS })))).not.toThrow();
  });
});

describe('a file named like no known client holding both "servers" and "mcpServers"', () => {
  it('is refused as ambiguous (CLIENT_CONFIG_INVALID naming both), not read as an "mcpServers" file', () => {
    let err: unknown;
    try {
      parseClientConfig('/home/u/.config/Code/User/mcp.json', JSON.stringify({ servers: { a: { command: '/usr/bin/a' } }, ...SERVERS }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WardenError);
    expect((err as WardenError).code).toBe('CLIENT_CONFIG_INVALID');
    expect((err as WardenError).message).toMatch(/both "servers" and "mcpServers"/);
  });

  it('named like a known client, the file is read by that client\'s member alone', () => {
    const cfg = parseClientConfig('/p/.vscode/mcp.json', JSON.stringify({ servers: { a: { command: '/usr/bin/a' } }, ...SERVERS }));
    expect(cfg.entries.map((e) => e.name)).toEqual(['a']);
  });
});
