import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_THREAD_NODES } from '../helpers/nodes.js';
import { copyOfWarmHome } from '../helpers/warm-digest.js';
import { WARDEN, connectWarden, tempDir } from '../helpers/warden.js';

// `run` on node 24, the node people run: there the relay runs with V8's TurboFan off (src/cli/run.ts; its hot code
// is optimized by Maglev, docs/adr/0056-launch-on-node-24.md, addendum "TurboFan off in the relay"). The suite's
// other sessions run the warden on the node running the tests.

const NODE24 = (IN_THREAD_NODES.find(([label]) => label === 'node 24') as [string, string])[1];
let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir('warden-run-node24-');
  home = path.join(dir, 'home');
  // basic.mjs enrolled with node 24 as 'warm': the home the run's digest template of node 24 was made in.
  copyOfWarmHome(NODE24, home);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('run on node 24', () => {
  it('relays a session of 1,000 calls, each answered with its own result', async () => {
    const { client } = await connectWarden([NODE24, WARDEN], home, 'warm');
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'env']);
      const wrong: string[] = [];
      for (let i = 0; i < 1000; i++) {
        const r = (await client.callTool({ name: 'echo', arguments: { message: `call ${i}` } })) as { content: Array<{ text: string }> };
        if (r.content[0]?.text !== `Echo: call ${i}`) wrong.push(`${i}: ${JSON.stringify(r)}`);
      }
      expect(wrong).toEqual([]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
