import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, FILESYSTEM, MEMORY, NODE, ROOT, WARDEN, addServer, auditEvents, cli, connectClient, tempDir } from '../helpers/warden.js';
import { addedHome } from '../helpers/run-template.js';

// The real reference servers from npm, driven through `mcp-warden run` by real clients.

let dir: string;
let home: string;
let files: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  files = path.join(dir, 'files');
  fs.mkdirSync(files);
  fs.writeFileSync(path.join(files, 'hello.txt'), 'hello from the warden test\n');
  addedHome(home, 'everything', [NODE, EVERYTHING, 'stdio']);
  addServer(home, 'filesystem', [NODE, FILESYSTEM, files]);
  addServer(home, 'memory', [NODE, MEMORY], ['--env', `MEMORY_FILE_PATH=${path.join(dir, 'memory.jsonl')}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('reference servers through the warden', () => {
  it('scan clean at the first trust: no finding at add (none audited), and none in what is locked', () => {
    expect(auditEvents(home).filter((e) => e.event === 'surface_findings')).toEqual([]);
    const r = cli(home, ['scan', '--all', '--json']);
    expect(r.code, r.stdout).toBe(0);
    expect((JSON.parse(r.stdout) as { servers: { id: string; findings: unknown[] }[] }).servers.map((x) => [x.id, x.findings])).toEqual([['everything', []], ['filesystem', []], ['memory', []]]);
  });

  it('server-everything: lists its tools and echoes through the SDK client', async () => {
    const { client } = await connectClient(home, 'everything');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('echo');
    const r = await client.callTool({ name: 'echo', arguments: { message: 'through the warden' } });
    expect(r.content).toEqual([{ type: 'text', text: 'Echo: through the warden' }]);
    await client.close();
  });

  it('server-filesystem: reads a file in its allowed directory, and reports a missing one', async () => {
    const { client } = await connectClient(home, 'filesystem');
    const ok = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'hello.txt') } });
    expect(JSON.stringify(ok.content)).toContain('hello from the warden test');
    const missing = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'nope.txt') } });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toContain('ENOENT: no such file or directory');
    await client.close();
  });

  it('server-memory: creates and reads back an entity', async () => {
    const { client } = await connectClient(home, 'memory');
    await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'warden', entityType: 'tool', observations: ['attests servers'] }] } });
    const graph = await client.callTool({ name: 'read_graph', arguments: {} });
    expect(JSON.stringify(graph.content)).toContain('attests servers');
    await client.close();
    const exits = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'memory');
    expect(exits.pop()).toMatchObject({ cause: 'client_eof', groupGone: true, nonJsonLines: 0 });
  });

  it('server-everything settles into a matched surface for a client with every capability and one with none', async () => {
    const before = auditEvents(home).length;
    const rich = await connectClient(home, 'everything', undefined, { roots: { listChanged: true }, sampling: {}, elicitation: {} });
    const richTools = (await rich.client.listTools()).tools.map((t) => t.name);
    await rich.client.callTool({ name: 'echo', arguments: { message: 'rich' } });
    await rich.client.close();
    const bare = await connectClient(home, 'everything');
    const bareTools = (await bare.client.listTools()).tools.map((t) => t.name);
    await bare.client.close();
    expect(richTools.length).toBeGreaterThan(bareTools.length);
    const events = auditEvents(home).slice(before);
    const surfaces = events.filter((e) => e.event === 'surface');
    expect(surfaces.length).toBeGreaterThanOrEqual(2);
    for (const s of surfaces) expect(s).toMatchObject({ server: 'everything', pinState: 'matched', changed: [] });
    expect(events.some((e) => e.event === 'call_refused' || e.event === 'tier_widening_blocked')).toBe(false);
  });

  it('the MCP inspector CLI lists tools through the warden', async () => {
    const inspector = path.join(ROOT, 'node_modules/.bin/mcp-inspector');
    const { stdout } = await promisify(execFile)(inspector, ['--cli', process.execPath, WARDEN, '--home', home, 'run', 'filesystem', '--method', 'tools/list'], {
      timeout: 60_000,
      env: { ...process.env, DANGEROUSLY_OMIT_AUTH: 'true' },
    });
    const names = (JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toContain('read_text_file');
    expect(names).toHaveLength(14);
  }, 60_000);
});
