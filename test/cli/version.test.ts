import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, WARDEN } from '../helpers/warden.js';

// `mcp-warden --version` (DESIGN.md, CLI contract): the version in package.json, alone on stdout, exit 0.

const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('mcp-warden --version', () => {
  it("prints package.json's version alone on stdout and exits 0, whatever the home", () => {
    const r = spawnSync(process.execPath, [WARDEN, '--version'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, MCP_WARDEN_HOME: '/nonexistent/home' } });
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.stdout).toBe(`${VERSION}\n`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('is listed in --help', () => {
    const r = spawnSync(process.execPath, [WARDEN, '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stdout).toMatch(/--version\s+print the version of mcp-warden/);
    expect(r.status).toBe(0);
  });
});
