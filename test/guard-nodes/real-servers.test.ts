import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { EVERYTHING, FILESYSTEM, MEMORY, addServer, auditEvents, connectClient, tempDir } from '../helpers/warden.js';

// The real reference servers from npm, enrolled (`add`: the guard's learn mode) and run (enforce) with node 22
// and node 24 (module.registerHooks: the guard's ES check in the server's own thread), as
// test/cli/reference-servers.test.ts does on node 20. A refusal here is the guard breaking a real server.

describe.each(IN_THREAD_NODES)('reference servers through the warden, on %s', (_label, node) => {
  let dir: string;
  let home: string;
  let files: string;
  const added: Record<string, string> = {};

  beforeAll(() => {
    dir = tempDir();
    home = path.join(dir, 'home');
    files = path.join(dir, 'files');
    fs.mkdirSync(files);
    fs.writeFileSync(path.join(files, 'hello.txt'), 'hello from the warden test\n');
    fs.mkdirSync(path.join(files, 'sub'));
    added.everything = addServer(home, 'everything', [node, EVERYTHING, 'stdio']).stdout;
    added.filesystem = addServer(home, 'filesystem', [node, FILESYSTEM, files]).stdout;
    added.memory = addServer(home, 'memory', [node, MEMORY], ['--env', `MEMORY_FILE_PATH=${path.join(dir, 'memory.jsonl')}`]).stdout;
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const refusals = (): Record<string, unknown>[] => auditEvents(home).filter((e) => e.event === 'module_refused');

  it('enrolls all three with this node (learn mode) without a refusal, recording this node as their interpreter', () => {
    const servers = (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, { command: string; args?: string[] }> }).servers;
    for (const id of ['everything', 'filesystem', 'memory']) {
      expect(fs.realpathSync(servers[id]?.command ?? '')).toBe(fs.realpathSync(node));
      expect(added[id]).not.toMatch(/refused/i);
    }
    expect(refusals()).toEqual([]);
  });

  it('server-everything: lists its tools and echoes', async () => {
    const { client, stderr } = await connectClient(home, 'everything');
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('echo');
    const r = await client.callTool({ name: 'echo', arguments: { message: 'through the warden' } });
    expect(r.content).toEqual([{ type: 'text', text: 'Echo: through the warden' }]);
    const sum = tools.find((t) => t === 'get-sum' || t === 'add');
    if (sum) expect(JSON.stringify((await client.callTool({ name: sum, arguments: { a: 2, b: 3 } })).content)).toContain('5');
    await client.close();
    expect(stderr()).not.toContain('module guard');
    expect(refusals()).toEqual([]);
  });

  it('server-filesystem: lists a temporary directory and reads a file in it', async () => {
    const { client, stderr } = await connectClient(home, 'filesystem');
    const list = await client.callTool({ name: 'list_directory', arguments: { path: files } });
    expect(list.isError).toBeFalsy();
    expect(JSON.stringify(list.content)).toContain('[FILE] hello.txt');
    expect(JSON.stringify(list.content)).toContain('[DIR] sub');
    const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'hello.txt') } });
    expect(JSON.stringify(read.content)).toContain('hello from the warden test');
    await client.close();
    expect(stderr()).not.toContain('module guard');
    expect(refusals()).toEqual([]);
  });

  it('server-memory: creates entities and reads the graph back', async () => {
    const { client, stderr } = await connectClient(home, 'memory');
    await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'warden', entityType: 'tool', observations: ['attests servers'] }] } });
    const graph = await client.callTool({ name: 'read_graph', arguments: {} });
    expect(JSON.stringify(graph.content)).toContain('attests servers');
    await client.close();
    expect(stderr()).not.toContain('module guard');
    expect(refusals()).toEqual([]);
    const exits = auditEvents(home).filter((e) => e.event === 'exit' && e.server === 'memory');
    expect(exits.pop()).toMatchObject({ cause: 'client_eof', groupGone: true });
  });
});
