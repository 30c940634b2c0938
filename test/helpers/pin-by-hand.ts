import fs from 'node:fs';
import path from 'node:path';
import { WARDEN } from './warden.js';

// A sandbox that reached servers.json and warden.lock without `mcp-warden sandbox` judging its grants: pinned by
// an earlier version of the warden, or both files edited by hand. The launch must judge it again (fail closed).
// Writes `sandbox` into server `id`'s entry and pins its hash with the warden's own store functions (dist/).

export async function pinByHand(home: string, id: string, sandbox: unknown): Promise<void> {
  const dist = path.dirname(path.dirname(WARDEN));
  const { resolveHome } = (await import(path.join(dist, 'store/paths.js'))) as typeof import('../../src/store/paths.js');
  const { saveSandboxHash } = (await import(path.join(dist, 'store/locks.js'))) as typeof import('../../src/store/locks.js');
  const { parseSandbox, sandboxHash } = (await import(path.join(dist, 'sandbox/schema.js'))) as typeof import('../../src/sandbox/schema.js');
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  config.servers[id].sandbox = sandbox;
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  await saveSandboxHash(resolveHome(home), id, sandboxHash(parseSandbox(sandbox)));
}
