import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { pinByHand } from '../helpers/pin-by-hand.js';
import { addServerWarm } from '../helpers/warm-digest.js';
import { ROOT, SERVERS, auditEvents, cli, tempDir } from '../helpers/warden.js';

// A write grant may not reach what the warden itself runs: its own code (dist/), its dependencies
// (node_modules/), the node that runs it, or the engine that confines. A confined server granted one of them could
// rewrite the warden the user starts next, and through it every attestation (docs/adr/0050-sandbox-engine.md).
// The grant is refused when set (sandbox/grant-policy.ts: the install, node's prefix and the system directories)
// and judged again at each launch (the sandbox's own check: refused before bwrap starts), as grants over the
// warden's home are: a sandbox pinned by an earlier version, or by hand, stands for what reaches the launch.

let dir: string;
let home: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  // The server runs on another node than the warden's, so that a grant of the warden's node is not also one of
  // the server's own files (refused as such).
  const [, node24] = IN_THREAD_NODES.find(([l]) => l === 'node 24') as [string, string];
  addServerWarm(home, 'probe', [node24, path.join(SERVERS, 'sandbox-probe.mjs')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const bwrap = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].find((f) => fs.existsSync(f)) ?? '/usr/bin/bwrap';

describe("a write grant over the warden's own install", () => {
  it.each([
    ["its code (a directory of dist/ that holds no module-guard file)", path.join(ROOT, 'dist/cli')],
    ['its dependencies', path.join(ROOT, 'node_modules')],
    ['the node that runs it', path.dirname(fs.realpathSync(process.execPath))],
    ['the confining engine', path.dirname(fs.realpathSync(bwrap))],
  ])('refuses it when set (SANDBOX_INVALID), and the launch when pinned by hand when it reaches %s (SANDBOX_UNAVAILABLE), and nothing runs', async (_what, grant) => {
    const set = cli(home, ['sandbox', 'probe', '--clear', '--network', 'none', '--allow-write', grant]);
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/SANDBOX_INVALID: the write grant \S+ is, holds or lies inside /);
    await pinByHand(home, 'probe', { network: 'none', write: [grant], read: { allow: [], deny: [] } });
    const r = cli(home, ['verify', 'probe']);
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(/SANDBOX_UNAVAILABLE: .*the write grant \S+ overlaps the warden's own /);
    const launches = auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'probe');
    expect(launches.at(-1)).toMatchObject({ decision: 'refuse', code: 'SANDBOX_UNAVAILABLE' });
  });
});
