import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, SERVERS, addServer, cli } from '../helpers/warden.js';

// Review 20, noticed. Gemini CLI's settings.json (~/.gemini/settings.json, .gemini/settings.json) carries, beside
// "mcpServers", settings that make Gemini CLI run a command of its own: "tools.discoveryCommand" (its output
// declares tools to the model), "tools.callCommand" (runs each of them), "mcp.serverCommand" (starts an MCP
// server); before January 2026 the same at the top level ("toolDiscoveryCommand", "toolCallCommand",
// "mcpServerCommand"). Import wrapped the file's servers, exit 0, while Gemini CLI ran that command outside the
// warden. A file named like no known client with both "servers" (VS Code's user-level mcp.json) and
// "mcpServers" was read as an "mcpServers" file and its "servers" entries were never reported.

const BASIC = path.join(SERVERS, 'basic.mjs');

function importFile(rel: string, settings: object): { code: number | null; stdout: string; stderr: string; changed: boolean } {
  const { dir } = copyOfRunTemplate(`attack42-vscode-dev ${NODE}`, (d) => {
    addServer(path.join(d, 'home'), 'basic', [NODE, BASIC]);
  });
  try {
    const file = path.join(dir, rel);
    const text = JSON.stringify(settings, null, 2);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    const r = cli(path.join(dir, 'home'), ['import', file, '--yes', '--json']);
    return { code: r.code, stdout: r.stdout, stderr: r.stderr, changed: fs.readFileSync(file, 'utf8') !== text };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ENTRY = { command: NODE, args: [BASIC] };

describe('a client file whose own settings run a command beside its servers, or that names two server maps', () => {
  it('a Gemini CLI settings.json with "tools.discoveryCommand" is refused whole (CLIENT_CONFIG_INVALID, exit 2), nothing written', () => {
    const r = importFile('.gemini/settings.json', { tools: { discoveryCommand: 'bin/get_tools', callCommand: 'bin/call_tool' }, mcpServers: { notes: ENTRY } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/CLIENT_CONFIG_INVALID: .*settings\.json: "tools" > "discoveryCommand"/);
    expect(r.changed).toBe(false);
  }, 60_000);

  it('a file with both "servers" and "mcpServers" is refused whole (CLIENT_CONFIG_INVALID, exit 2), nothing written', () => {
    const r = importFile('user/mcp.json', { servers: { hidden: ENTRY }, mcpServers: { notes: ENTRY } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/CLIENT_CONFIG_INVALID: .*both "servers" and "mcpServers"/);
    expect(r.changed).toBe(false);
  }, 60_000);
});
