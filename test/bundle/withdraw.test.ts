import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addServer, auditEvents, cli, connectClient } from '../helpers/warden.js';
import { keyPair, machine, serverCopy, sharedMachineA, signedBundle, tempDir, type KeyPair } from './helpers.js';
import { readHomeJson as read } from '../helpers/json-docs.js';

// A fleet revokes a server by publishing a bundle that no longer names it: each machine that applied the earlier
// bundle removes the server, its lock entries and the allowlist entries only it used. Servers a machine added
// itself are never touched.

let root: string;
let homeA: string;
let key: KeyPair;
let both: string;
let basicOnly: string;
let secondScript: string;
const env = ['--env', 'basic.SECRET_TOKEN=b', '--env', 'second.SECRET_TOKEN=b'];

const allowlistPaths = (home: string): string[] => (read(home, 'allowlist.json').entries as { path: string }[]).map((e) => e.path);

beforeAll(() => {
  root = tempDir('warden-withdraw-');
  homeA = sharedMachineA(root).homeA;
  const dir = path.join(root, 'second');
  fs.mkdirSync(dir);
  secondScript = serverCopy(dir);
  addServer(homeA, 'second', ['node', secondScript], ['--env', 'SECRET_TOKEN=a']);
  key = keyPair(root, 'signer');
  both = signedBundle(homeA, path.join(root, 'both.bundle.json'), key, ['--serial', '10']);
  basicOnly = signedBundle(homeA, path.join(root, 'basic-only.bundle.json'), key, ['--serial', '11', '--servers', 'basic']);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('bundle apply: a server the next bundle no longer names', () => {
  it('is removed with its lock entries and the allowlist entries only it used, and no longer runs; a server the machine added itself stays', async () => {
    const homeB = machine(root, 'B');
    const ownDir = path.join(root, 'own-b');
    fs.mkdirSync(ownDir);
    addServer(homeB, 'own', ['node', serverCopy(ownDir)]);
    expect(cli(homeB, ['bundle', 'apply', both, '--key', key.pub, ...env]).code).toBe(0);
    expect(Object.keys(read(homeB, 'servers.json').servers).sort()).toEqual(['basic', 'own', 'second']);
    expect(allowlistPaths(homeB)).toContain(secondScript);

    // A session of 'second' is running when the fleet withdraws it.
    const { client: running } = await connectClient(homeB, 'second');
    const closed = new Promise<void>((resolve) => (running.onclose = resolve));

    const r = cli(homeB, ['bundle', 'apply', basicOnly, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=b']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Removed (named by the previous bundle, not by this one): second');
    expect(r.stdout).toMatch(/Running sessions asked to end: second \(pid \d+\)/);
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('the running session of the withdrawn server did not end within 20 s')), 20_000))]);
    await expect.poll(() => auditEvents(homeB).some((e) => e.event === 'exit' && e.server === 'second' && e.cause === 'signal'), { timeout: 20_000 }).toBe(true);
    expect(Object.keys(read(homeB, 'servers.json').servers).sort()).toEqual(['basic', 'own']);
    expect(Object.keys(read(homeB, 'tools.lock').servers).sort()).toEqual(['basic', 'own']);
    expect(Object.keys(read(homeB, 'warden.lock').servers).sort()).toEqual(['basic', 'own']);
    const paths = allowlistPaths(homeB);
    expect(paths.filter((p) => p.startsWith(path.dirname(secondScript)))).toEqual([]);
    expect(paths.filter((p) => p.startsWith(ownDir)).length).toBeGreaterThan(0);
    expect(paths).toContain(process.execPath); // node: still run by the others
    expect(read(homeB, 'bundle-state.json').applied).toMatchObject({ serial: 11, servers: ['basic'] });
    expect(auditEvents(homeB).find((e) => e.event === 'bundle_applied' && e.serial === 11)).toMatchObject({ servers: ['basic'], removed: ['second'], endedSessions: [{ server: 'second', pid: expect.any(Number) }] });

    await expect(connectClient(homeB, 'second').then(({ client }) => client.close())).rejects.toThrow("mcp-warden refused to launch server 'second' (SERVER_UNKNOWN): servers.json has no server of that id.");
    for (const id of ['basic', 'own']) {
      const { client } = await connectClient(homeB, id);
      await client.close();
    }
  });

  it('a machine that never applied a bundle naming it keeps its own server of the same name', () => {
    const homeC = machine(root, 'C');
    const dir = path.join(root, 'second-c');
    fs.mkdirSync(dir);
    addServer(homeC, 'second', ['node', serverCopy(dir)]);
    expect(cli(homeC, ['bundle', 'apply', basicOnly, '--key', key.pub, '--env', 'basic.SECRET_TOKEN=c']).code).toBe(0);
    expect(Object.keys(read(homeC, 'servers.json').servers).sort()).toEqual(['basic', 'second']);
    expect(auditEvents(homeC).at(-1)).not.toHaveProperty('removed');
  });
});
