import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LaunchPlan } from '../../src/attest/plan.js';
import { dropRecheckKeys, recheckPlan } from '../../src/attest/recheck.js';
import { statKey } from '../../src/attest/stat-key.js';
import { digestPackageTree } from '../../src/attest/tree.js';
import { addServer, alive, escapeRegExp, launchCount, NODE, refusedInitialize, SERVERS, sessionLaunch, tempDir } from '../helpers/warden.js';

// The re-stat of everything digested (src/attest/recheck.ts) runs from the server's first line, and nothing from
// the server reaches the client before it passed (docs/adr/0005, 0020). The server here changes a file of its own
// package tree after launch; the module guard does not see it (the file is already loaded).

let dir: string;
let home: string;
let marker: string;
let victim: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  marker = path.join(dir, 'marker');
  const servers = path.join(dir, 'servers');
  fs.cpSync(SERVERS, servers, { recursive: true });
  victim = path.join(servers, 'lib/rpc.mjs');
  addServer(home, 'tamper', [NODE, path.join(servers, 'tamper-tree.mjs')], ['--env', `TAMPER_MARKER=${marker}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the re-check of the digested files after launch', () => {
  it('refuses the held initialize result of a server whose package tree changed before it answered', async () => {
    fs.writeFileSync(marker, 'answer');
    const r = await refusedInitialize(home, 'tamper');
    // The path is the package's: the client is told the warden's code, the warden's stderr which file.
    expect(r.error.message).toContain("server 'tamper' could not be verified as the program that was attested (");
    expect(r.error.message).not.toContain(victim);
    expect(r.session.stderr).toContain(`${victim}, in the package tree ${path.dirname(path.dirname(victim))}, changed after it was digested`);
    expect(r.code).toBe(3);
    expect(r.session.lines()).toHaveLength(1); // the refusal: no byte of the server's
  });

  it('closes the session at the first line, without waiting for an answer to initialize that never comes', async () => {
    // The server writes one notification and then nothing. A re-check that only started (or was only looked at)
    // when the handshake ends would never run: the client would wait for its initialize answer forever.
    fs.writeFileSync(marker, 'silent');
    const after = launchCount(home);
    const r = await refusedInitialize(home, 'tamper');
    expect(r.error.message).toContain("server 'tamper' could not be verified as the program that was attested (");
    expect(r.session.stderr).toContain(`${victim}, in the package tree`);
    expect(r.session.stderr).toContain('changed after it was digested (between digest and load); the session was closed');
    expect(r.code).toBe(3);
    expect(r.session.lines()).toHaveLength(1);
    const launch = await sessionLaunch(home, { after });
    expect(alive(launch?.pid as number)).toBe(false);
  });
});

describe('recheckPlan', () => {
  it('passes an unchanged plan, and names the first changed path in digest order, whatever else changed', async () => {
    const pkg = path.join(dir, 'pkg');
    for (let i = 0; i < 2000; i++) {
      fs.mkdirSync(path.join(pkg, `d${i % 40}`), { recursive: true });
      fs.writeFileSync(path.join(pkg, `d${i % 40}`, `f${i}.js`), `${i}`);
    }
    fs.writeFileSync(path.join(pkg, 'package.json'), '{"name":"pkg","version":"1.0.0"}');
    const script = path.join(pkg, 'd0/f0.js');
    const tree = digestPackageTree(pkg);
    const plan: LaunchPlan = {
      serverId: 'x',
      file: NODE,
      args: [],
      argv0: 'node',
      artifacts: [
        { kind: 'script', path: script, sha256: '', chain: [script], key: statKey(fs.lstatSync(script, { bigint: true })) },
        { kind: 'package', path: tree.root, sha256: tree.sha256, chain: [tree.root], treeKeys: tree.keys },
      ],
    };
    await expect(recheckPlan(plan)).resolves.toBeUndefined();
    // Changed late in the order first, then earlier: the earlier one is named. Then the script, before the tree.
    const paths = [...tree.keys.keys()];
    const late = paths[paths.length - 1] as string;
    const early = paths[paths.length >> 1] as string;
    for (const p of [late, early]) fs.chmodSync(p, fs.statSync(p).mode);
    await expect(recheckPlan(plan)).rejects.toThrow(`${early}, in the package tree ${tree.root}, changed after it was digested`);
    fs.rmSync(script);
    await expect(recheckPlan(plan)).rejects.toMatchObject({ code: 'ARTIFACT_CHANGED', message: expect.stringMatching(new RegExp(`^script ${escapeRegExp(script)} changed after it was digested`)) });
  });

  it('drops a re-checked plan\'s tree keys and directories and keeps its artifacts and digests (what a session holds on to)', () => {
    const key = statKey(fs.lstatSync(NODE, { bigint: true }));
    const plan: LaunchPlan = {
      serverId: 'x', file: NODE, args: [], argv0: 'node',
      artifacts: [{ kind: 'package', path: dir, sha256: 'ab'.repeat(32), chain: [dir], files: 1, treeKeys: new Map([[NODE, 'k']]), treeDirs: [dir] }, { kind: 'script', path: NODE, sha256: 'cd'.repeat(32), chain: [NODE], key }],
    };
    dropRecheckKeys(plan);
    expect(plan.artifacts).toEqual([{ kind: 'package', path: dir, sha256: 'ab'.repeat(32), chain: [dir], files: 1 }, { kind: 'script', path: NODE, sha256: 'cd'.repeat(32), chain: [NODE], key }]);
  });
});
