import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryDigest, fleetServers } from '../../src/fleet/retire.js';
import { loadBundleState, updateBundleState } from '../../src/store/bundle/state.js';
import { resolveHome } from '../../src/store/paths.js';
import type { ServerConfig, ServersFile } from '../../src/store/servers.js';
import { tempDir } from '../helpers/warden.js';

// bundle-state.json's `applied.entries` is keyed by server id: which servers the last applied bundle brought and
// still are as it wrote them (src/fleet/retire.ts), the ones a later bundle that no longer names them removes. An id
// that is also the name of an Object.prototype member is an ordinary id there too (test/store/own-keys.test.ts).

let dir: string;
beforeEach(() => (dir = tempDir()));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const IDS = ['basic', 'constructor', 'prototype'];
const entry = (id: string): ServerConfig => ({ command: '/usr/bin/node', args: [`/srv/${id}.mjs`] }) as unknown as ServerConfig;

describe("bundle-state.json's entries of the servers a bundle brought", () => {
  it('keeps the entry of a server named constructor (and prototype) through a load and a write: it stays the fleet\'s', async () => {
    const paths = resolveHome(path.join(dir, 'home'));
    fs.mkdirSync(paths.home, { mode: 0o700 });
    const servers = { version: 1, servers: Object.fromEntries(IDS.map((id) => [id, entry(id)])) } as unknown as ServersFile;
    const entries = Object.fromEntries(IDS.map((id) => [id, entryDigest(entry(id))]));
    const applied = { serial: 10, sha256: 'a'.repeat(64), at: new Date(0).toISOString(), servers: IDS, entries };
    fs.writeFileSync(paths.bundleState, JSON.stringify({ version: 1, applied }), { mode: 0o600 });

    expect(Object.keys(loadBundleState(paths).applied?.entries ?? {}).sort()).toEqual(IDS);
    expect(fleetServers(loadBundleState(paths), servers).sort()).toEqual(IDS);
    await updateBundleState(paths, () => undefined); // a later write (bundle create records its serial)
    expect(Object.keys(JSON.parse(fs.readFileSync(paths.bundleState, 'utf8')).applied.entries).sort()).toEqual(IDS);
  });
});
