import { describe, expect, it } from 'vitest';
import { refuseRegistryLaunchers } from '../../src/attest/launchers.js';
import { WardenError } from '../../src/error.js';

function refusal(command: string, args: string[]): WardenError | undefined {
  try {
    refuseRegistryLaunchers('fs', command, args);
    return undefined;
  } catch (err) {
    return err as WardenError;
  }
}

describe('registry launchers', () => {
  it.each([
    ['npx', ['-y', '@modelcontextprotocol/server-filesystem', '/tmp']],
    ['/usr/local/bin/npx', ['@scope/pkg']],
    ['uvx', ['mcp-server-fetch']],
    ['bunx', ['pkg']],
    ['pnpm', ['dlx', 'pkg']],
    ['npm', ['exec', 'pkg']],
    ['yarn', ['dlx', 'pkg']],
    ['node', ['/opt/x/cli.js', 'pkg@latest']],
  ])('refuses %s %j, saying how to install a pinned copy', (command, args) => {
    const err = refusal(command, args);
    expect(err?.code).toBe('REGISTRY_LAUNCHER');
    expect(err?.exitCode).toBe(3);
    expect(err?.message).toMatch(/Install a pinned copy/);
    expect(err?.message).toContain('mcp-warden add fs -- node');
  });

  it('names the package in the advice', () => {
    expect(refusal('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'])?.message).toContain('--save-exact @modelcontextprotocol/server-filesystem@<version>');
  });

  it('lets an installed server through', () => {
    expect(refusal('node', ['/opt/servers/node_modules/x/dist/index.js'])).toBeUndefined();
    expect(refusal('npm', ['run', 'server'])).toBeUndefined();
  });
});
