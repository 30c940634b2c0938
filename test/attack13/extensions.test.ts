import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_NODES } from '../helpers/nodes.js';
import { perTestDirs } from '../helpers/warden.js';
import { LOADER, markerText, outsideCjs, templateCall } from './loader-session.js';

// ATTACK (module guard, node 20): CommonJS is guarded at Module.prototype.load; Module._extensions['.js']
// (require.extensions), called directly with a new Module, reads and compiles the file without passing there.
// On node 22.15+ the handler asks the in-thread load hooks for the source (loadSource), so the guard sees it;
// node 20 has no such hook. Asserts the secure behaviour on every node: the file does not run, the server is ended.

const tmp = perTestDirs();

describe.each(GUARD_NODES)("Module._extensions['.js'] called directly, on %s", (_label, node) => {
  it("ends a server that compiles a CommonJS file outside its set through Module._extensions['.js'], before the file runs", async () => {
    const marker = path.join(tmp.dir, 'marker');
    const outside = outsideCjs(path.join(tmp.dir, 'elsewhere/late.js'), marker);
    fs.writeFileSync(path.join(tmp.dir, 'elsewhere/package.json'), JSON.stringify({ type: 'commonjs' }));
    const r = await templateCall(tmp.home, node, LOADER, 'extjs', { path: outside });
    expect(markerText(marker)).toBe('');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`tried to load ${outside}, which is outside its attested set`);
  });
});
