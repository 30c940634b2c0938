import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../helpers/warden.js';
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

  it.each([
    ['/opt/deno/bin/deno', ['run', '-A', 'npm:@scope/pkg', '--stdio']],
    ['deno', ['run', '--allow-all', 'jsr:@scope/pkg']],
    ['deno', ['run', 'https://example.com/server.ts']],
    ['deno', ['run', '--import-map=https://example.com/map.json', 'main.ts']],
    ['deno', ['npm:@scope/pkg']],
    ['deno', ['run', '--preload', 'npm:evil', '/srv/x/main.ts']],
    ['deno', ['run', '--some-new-option', 'npm:pkg']],
    ['dx', ['pkg']],
    ['dnx', ['Some.Tool', '--yes']],
    ['uv', ['run', '--with', 'mcp-server-x', 'mcp-server-x']],
    ['uv', ['run', '--with=mcp-server-x', 'mcp-server-x']],
    ['uv', ['run', '--script', 'server.py']],
    ['uv', ['--directory', '/srv/x', 'tool', 'run', 'pkg']],
    ['npm', ['--prefix', '/srv/x', 'exec', 'pkg']],
    ['npm', ['-w', 'server', 'exec', 'pkg']],
    ['npm', ['--workspace', 'server', 'x', 'pkg']],
    ['pnpm', ['--dir', '/srv/x', 'dlx', 'pkg']],
    ['pnpm', ['-C', '/srv/x', 'dlx', 'pkg']],
    ['yarn', ['--cwd', '/srv/x', 'dlx', 'pkg']],
    ['bun', ['--cwd', '/srv/x', 'x', 'pkg']],
  ])('refuses %s %j: a value-taking global option does not hide the subcommand, and deno/uv/dnx fetch too', (command, args) => {
    expect(refusal(command, args)?.code).toBe('REGISTRY_LAUNCHER');
  });

  it('refuses, failing closed, a launcher whose subcommand follows an option it does not know', () => {
    const err = refusal('npm', ['--some-new-option', 'value', 'exec', 'pkg']);
    expect(err?.code).toBe('REGISTRY_LAUNCHER');
    expect(err?.message).toContain("'--some-new-option'");
  });

  it('names the package in the advice', () => {
    expect(refusal('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'])?.message).toContain('--save-exact @modelcontextprotocol/server-filesystem@<version>');
  });

  it('lets an installed server through', () => {
    expect(refusal('node', ['/opt/servers/node_modules/x/dist/index.js'])).toBeUndefined();
    expect(refusal('npm', ['run', 'server'])).toBeUndefined();
    expect(refusal('npm', ['--prefix', '/srv/x', 'run', 'server'])).toBeUndefined();
    expect(refusal('deno', ['run', '--allow-read', '/srv/x/main.ts'])).toBeUndefined();
    expect(refusal('uv', ['run', '--directory', '/srv/x', 'server.py'])).toBeUndefined();
  });

  it('add refuses, exit 3, a stand-in deno given an npm: specifier (no network: refused before it could run)', () => {
    const dir = tempDir('warden-launchers-');
    try {
      const deno = path.join(dir, 'deno');
      const ran = path.join(dir, 'ran');
      fs.writeFileSync(deno, `#!/bin/sh\ntouch ${ran}\n`, { mode: 0o755 });
      const r = cli(path.join(dir, 'home'), ['add', 'd', '--yes', '--', deno, 'run', '-A', 'npm:@scope/pkg']);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('REGISTRY_LAUNCHER');
      expect(fs.existsSync(ran)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
