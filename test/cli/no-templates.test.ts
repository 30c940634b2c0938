import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, cli, connectClient, tempDir } from '../helpers/warden.js';

// A server that advertises resources and answers resources/templates/list "method not found", as
// mcp-server-kubernetes does (issue 28: it could not be added), lists no templates: it is locked with an empty
// template catalog and runs; templates appearing later are catalog drift.

let dir: string;
let home: string;
let templates: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  templates = path.join(dir, 'templates');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a server without resources/templates/list', () => {
  it('is added, locked with no templates, and serves a client; templates that appear later are catalog drift', async () => {
    addServer(home, 'k8s', [NODE, path.join(SERVERS, 'i28/no-templates.mjs')], ['--env', `TEMPLATES_FILE=${templates}`]);
    const lock = JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8')) as { servers: Record<string, { catalogs: Record<string, unknown> }> };
    expect(lock.servers.k8s?.catalogs).toMatchObject({ resources: { 'k8s://namespaces': expect.stringMatching(/^sha256:/) }, resourceTemplates: {} });
    const { client } = await connectClient(home, 'k8s');
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_pods']);
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['k8s://namespaces']);
    } finally {
      await client.close();
    }
    fs.writeFileSync(templates, '1');
    const v = cli(home, ['verify', 'k8s', '--json']);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout)).toMatchObject({ servers: [{ id: 'k8s', status: 'drift', worst: 'catalog', catalogs: [{ kind: 'resourceTemplates', id: 'k8s://pods/{name}', state: 'added' }] }] });
  });
});
