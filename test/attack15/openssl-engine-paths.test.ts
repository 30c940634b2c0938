import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES, IN_THREAD_NODES } from '../helpers/nodes.js';
import { SERVERS, perTestDirs } from '../helpers/warden.js';
import { loaderTemplate, markerText, outsideSharedLibrary, templateCall } from '../attack13/loader-session.js';

// OpenSSL engines reached without node:crypto or node:tls imported at start-up, each way to the built-in (the
// guard's engine checks were once put in place only at the first load of one: test/attack18 shows why not).

const tmp = perTestDirs();

function layout(dir: string): string {
  const pkg = path.join(dir, 'work/pkg');
  fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
  fs.mkdirSync(path.join(pkg, 'lib'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'engine-paths', version: '1.0.0', type: 'module' }));
  fs.copyFileSync(path.join(SERVERS, 'lib/rpc.mjs'), path.join(pkg, 'lib/rpc.mjs'));
  const server = path.join(pkg, 'src/server.mjs');
  fs.copyFileSync(path.join(SERVERS, 'attack15/engine-paths.mjs'), server);
  return server;
}

/** layout()'s package, enrolled once per run and node. */
const ENGINE_PATHS = loaderTemplate('attack15-engine-paths', layout);

const nodes = (tool: string): Array<[string, string]> =>
  tool === 'binding' ? GUARD_NODES.filter(([label]) => !label.includes('24')) : tool === 'builtin' ? IN_THREAD_NODES : GUARD_NODES;

describe.each(['named', 'require', 'builtin', 'https', 'binding'])('an OpenSSL engine reached by %s', (tool) => {
  it.each(nodes(tool))('ends the server before the outside engine runs, on %s', async (_label, node) => {
    const marker = path.join(tmp.dir, 'marker');
    const lib = outsideSharedLibrary(path.join(tmp.dir, 'elsewhere/engine.so'), marker);
    const r = await templateCall(tmp.home, node, ENGINE_PATHS, tool, { path: lib });
    expect(markerText(marker)).toBe('');
    expect(r.answer).not.toContain('loaded: returned');
    expect(r.code).toBe(3);
    expect(r.refused).toEqual([expect.objectContaining({ module: lib })]);
  });
});
