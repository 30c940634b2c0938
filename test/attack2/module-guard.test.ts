import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVERS, addServer, connectClient, tempDir } from '../helpers/warden.js';

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
  it('BYPASS: a file of the package changed after the launch was attested is loaded lazily with its new content (should be refused)', async () => {
    const marker = path.join(dir, 'marker');
    const { pkg, server } = layout(marker);
    addServer(home, 'late', [NODE, server]);
    const { client } = await connectClient(home, 'late');
    await client.listTools(); // attested and re-stat'ed at the first line: everything matches
    // Now (a `git pull`, an `npm install`, or the server itself) the never-yet-loaded in-package module changes.
    writeModule(path.join(pkg, 'lib/late.mjs'), marker, 'POISONED');
    let text: string;
    try {
      const r = (await client.callTool({ name: 'late', arguments: {} })) as { content?: { text?: string }[] };
      text = r.content?.[0]?.text ?? '';
    } catch (err) {
      text = `error: ${(err as Error).message}`;
    }
    await client.close().catch(() => undefined);
    // Secure: the guard compares what it loads against the stat key digested for this launch and refuses.
    expect({ text, marker: read(marker) }).toEqual({ text: expect.not.stringContaining('POISONED'), marker: expect.not.stringContaining('POISONED') });
  });

  it('held: the server overwrites the worker environment data the preload trusts (setEnvironmentData), then an ordinary worker imports an outside file: the server is ended', async () => {
    const marker = path.join(dir, 'marker');
    const { server } = layout(marker);
    const outside = path.join(dir, 'elsewhere/outside.mjs');
    writeModule(outside, marker, 'OUTSIDE CODE');
    addServer(home, 'forge', [NODE, server]);
    const text = await call('forge', 'forge', { path: outside });
    expect({ text, marker: read(marker) }).toEqual({ text: expect.not.stringContaining('OUTSIDE CODE'), marker: expect.not.stringContaining('OUTSIDE CODE') });
  });

  it('BYPASS: a worker whose execArgv names the preload URL as the value of another flag (--conditions URL) runs without the guard and loads an outside file (should be refused)', async () => {
    const marker = path.join(dir, 'marker');
    const { server } = layout(marker);
    const outside = path.join(dir, 'elsewhere/outside.mjs');
    writeModule(outside, marker, 'OUTSIDE CODE');
    addServer(home, 'argv', [NODE, server]);
    const text = await call('argv', 'argv', { path: outside });
    expect({ text, marker: read(marker) }).toEqual({ text: expect.not.stringContaining('OUTSIDE CODE'), marker: expect.not.stringContaining('OUTSIDE CODE') });
  });
});
