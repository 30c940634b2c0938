import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVERS, addServer, auditEvents, connectClient, tempDir } from '../helpers/warden.js';

// Attack (hostile server, or someone who can write the package while the server runs): module files loaded
// lazily after the server's first line, past the module guard (src/launch/preload/).

const NODE = process.execPath;
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a2-guard-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeModule(file: string, marker: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(text)} + '\\n');\nexport const description = ${JSON.stringify(text)};\n`);
}

function layout(marker: string): { pkg: string; server: string } {
  const pkg = path.join(dir, 'work/pkg');
  fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
  fs.mkdirSync(path.join(pkg, 'lib'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'a2-guard', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  writeModule(path.join(pkg, 'lib/late.mjs'), marker, 'attested late module');
  const server = path.join(pkg, 'src/server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'attack2-guard.mjs'), server);
  return { pkg, server };
}

async function call(id: string, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const { client } = await connectClient(home, id);
  try {
    const r = (await client.callTool({ name: tool, arguments: args })) as { content?: { text?: string }[] };
    return r.content?.[0]?.text ?? JSON.stringify(r);
  } catch (err) {
    return `error: ${(err as Error).message}`;
  } finally {
    await client.close().catch(() => undefined);
  }
}

const read = (f: string): string => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');

describe('module guard, lazy loads after the first line', () => {
  it('a file of the package changed after the launch was attested and loaded lazily ends the server before its new content runs', async () => {
    const marker = path.join(dir, 'marker');
    const { pkg, server } = layout(marker);
    addServer(home, 'late', [NODE, server]);
    const { client } = await connectClient(home, 'late');
    await client.listTools(); // attested and re-stat'ed at the first line: everything matches
    // Now (a `git pull`, an `npm install`, or the server itself) the never-yet-loaded in-package module changes.
    writeModule(path.join(pkg, 'lib/late.mjs'), marker, 'POISONED');
    const call = client.callTool({ name: 'late', arguments: {} });
    await expect(call).rejects.toThrow(/mcp-warden closed the session: server 'late' was ended by the warden's module guard/);
    await client.close();
    expect(read(marker)).toBe('');
    expect(auditEvents(home).filter((e) => e.event === 'module_refused' && e.server === 'late')).toHaveLength(1);
  });

  it('a server that writes a well-formed set naming an outside file (with its stat key) into the worker environment data (setEnvironmentData) is ended by its worker\'s guard (the whole process, killed) before the worker imports that file', async () => {
    const marker = path.join(dir, 'marker');
    const { server } = layout(marker);
    const outside = path.join(dir, 'elsewhere/outside.mjs');
    writeModule(outside, marker, 'OUTSIDE CODE');
    addServer(home, 'forge', [NODE, server]);
    // A worker's guard kills the process (process.exit would end that worker only): no exit status 77 to read.
    expect(await call('forge', 'forge', { path: outside })).toMatch(/^error: .*mcp-warden closed the session: server 'forge' exited before answering/);
    expect(read(marker)).toBe('');
    expect(auditEvents(home).filter((e) => e.event === 'module_refused' && e.server === 'forge')).toHaveLength(1);
  });

  it('a worker whose execArgv names the preload URL as the value of another flag (--conditions URL) ends the server before the worker loads an outside file', async () => {
    const marker = path.join(dir, 'marker');
    const { server } = layout(marker);
    const outside = path.join(dir, 'elsewhere/outside.mjs');
    writeModule(outside, marker, 'OUTSIDE CODE');
    addServer(home, 'argv', [NODE, server]);
    expect(await call('argv', 'argv', { path: outside })).toMatch(/^error: .*mcp-warden closed the session: server 'argv' was ended by the warden's module guard/);
    expect(read(marker)).toBe('');
    expect(auditEvents(home).filter((e) => e.event === 'module_refused' && e.server === 'argv')).toHaveLength(1);
  });
});
