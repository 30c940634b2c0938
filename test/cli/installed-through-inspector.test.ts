import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../helpers/registry.js';
import { ROOT, WARDEN, cli, tempDir } from '../helpers/warden.js';

// Issue 28, as a new user: a server installed the way people install tools (`mcp-warden install`, from the
// registry stand-in serving the real @modelcontextprotocol/server-memory, a dev dependency because it is small
// and is the server that wrote into its own store entry), used twice through the MCP inspector CLI with a call
// that writes data. With its data path set (guide, "Servers that write data"), the second launch is admitted
// and reads back what the first wrote; the store entry is unchanged.

let dir: string;
let home: string;
let registry: LocalRegistry;
let memoryFile: string;
beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  memoryFile = path.join(dir, 'data', 'memory.jsonl');
  fs.mkdirSync(path.dirname(memoryFile));
  registry = await startLocalRegistry(dir);
});
afterAll(async () => {
  await registry?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function inspect(...args: string[]): Promise<unknown> {
  const inspector = path.join(ROOT, 'node_modules/.bin/mcp-inspector');
  const { stdout } = await promisify(execFile)(inspector, ['--cli', process.execPath, WARDEN, '--home', home, 'run', 'memory', ...args], { timeout: 60_000, env: { ...process.env, DANGEROUSLY_OMIT_AUTH: 'true' } });
  return JSON.parse(stdout) as unknown;
}

describe('server-memory installed from the registry, used twice through the inspector', () => {
  it('writes its data where MEMORY_FILE_PATH says, and its second launch is admitted and reads it back', async () => {
    const installed = cli(home, ['install', '@modelcontextprotocol/server-memory@2026.8.31', '--id', 'memory', '--allow-unsigned', '--yes', '--env', `MEMORY_FILE_PATH=${memoryFile}`], { env: registry.npmEnv() });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const entities = JSON.stringify([{ name: 'alice', entityType: 'person', observations: ['likes tea'] }]);
    const created = await inspect('--method', 'tools/call', '--tool-name', 'create_entities', '--tool-arg', `entities=${entities}`);
    expect(JSON.stringify(created)).toContain('alice');
    expect(fs.readFileSync(memoryFile, 'utf8')).toContain('"alice"');
    const graph = await inspect('--method', 'tools/call', '--tool-name', 'read_graph');
    expect(JSON.stringify(graph)).toContain('likes tea');
    const status = cli(home, ['status', 'memory']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(cli(home, ['verify', 'memory']).code).toBe(0);
  }, 180_000);
});
