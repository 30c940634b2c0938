import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeRelease } from '../../src/launch/node-release.js';
import { requireHost } from '../helpers/host.js';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { cli, NODE, SERVERS, tempDir } from '../helpers/warden.js';

// The release of a node interpreter that is not the warden's own decides one option of its launch
// (docs/adr/0049-require-esm-on-node-20.md). It is read from the executable's bytes, never by running it: the
// interpreter is allowlisted code, and whatever it does when run belongs inside the launch's containment (its
// process group, cgroup and sandbox), not in a side run of the warden's own (docs/adr/0058-node-release-read-not-run.md).

const sha256 = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const noMemo = { get: (): string | undefined => undefined, set: (): void => {} };
const answer = (node: string): string => spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

let dir: string;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the release of a node interpreter read from its file', () => {
  it('is the release each real node build answers to --version (node 20, 22 and 24)', async () => {
    const nodes = [NODE, ...IN_THREAD_NODES.map(([, file]) => file)];
    const read = await Promise.all(nodes.map((n) => nodeRelease(n, sha256(n), false, noMemo)));
    expect(read.map((r) => (r ? `v${r.join('.')}` : r))).toEqual(nodes.map(answer));
  });

  it('is none for a file that names no release or two different ones', async () => {
    const none = path.join(dir, 'none');
    fs.writeFileSync(none, Buffer.concat([Buffer.alloc(4096, 7), Buffer.from('v24.1.0\0node v24.1.0\0')]));
    const two = path.join(dir, 'two');
    fs.writeFileSync(two, Buffer.from('\0https://nodejs.org/dist/v24.1.0/node-v24.1.0.tar.gz\0https://nodejs.org/dist/v20.1.0/node-v20.1.0-headers.tar.gz\0'));
    expect(await nodeRelease(none, sha256(none), false, noMemo)).toBeUndefined();
    expect(await nodeRelease(two, sha256(two), false, noMemo)).toBeUndefined();
  });

  it('is the one its user agent names when it names no release tarball (a build without release URLs)', async () => {
    const agent = path.join(dir, 'agent');
    fs.writeFileSync(agent, Buffer.from('\0node.js/v22.3.1\0v22.3.1 is not read alone\0'));
    expect(await nodeRelease(agent, sha256(agent), false, noMemo)).toEqual([22, 3, 1]);
  });
});

describe('the release of a node interpreter read from its file, across the reader\'s 1 MiB chunks', () => {
  it('is read whole when its name is cut by a chunk\'s end at every offset', async () => {
    const name = 'node-v24.10.3.tar.gz';
    const files = Array.from({ length: name.length + 1 }, (_, cut) => {
      const file = path.join(dir, `cut-${cut}`);
      fs.writeFileSync(file, Buffer.concat([Buffer.alloc((1 << 20) - cut, 0), Buffer.from(name)]));
      return file;
    });
    const read = await Promise.all(files.map((f) => nodeRelease(f, sha256(f), false, noMemo)));
    expect(read).toEqual(files.map(() => [24, 10, 3]));
  });
});

describe('an interpreter named node that is not the warden\'s own', () => {
  it('is run by the warden only as the server it launches, never to ask its release', () => {
    requireHost('cc');
    const bin = path.join(dir, 'runtime');
    fs.mkdirSync(bin);
    const log = path.join(dir, 'runs.log');
    const wrapper = path.join(bin, 'node');
    const built = spawnSync('cc', ['-O2', `-DLOG_PATH="${log}"`, `-DREAL_NODE="${NODE}"`, '-o', wrapper, path.join(SERVERS, 'node-release/logging-node.c')], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const server = path.join(SERVERS, 'basic.mjs');
    const home = path.join(dir, 'home');
    // The log's directory is named in the server's environment, so enrollment's observation (ADR 0063) keeps the
    // wrapper's writes there real instead of collecting them in its overlay of /tmp.
    const add = cli(home, ['add', 'wrapped', '--yes', '--env', `RUNS_LOG_DIR=${dir}`, '--', wrapper, server]);
    // However the launch itself ends (the wrapper execs another file than the one attested), each of the
    // wrapper's runs was a launch of the server: its arguments end with the server's script.
    const runs = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect({ runs: runs.length > 0, add: add.code !== null }).toEqual({ runs: true, add: true });
    expect(runs.filter((line) => !line.endsWith(` ${server}`))).toEqual([]);
  });
});
