import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/warden.js';

// The session scan never counts the scanning process itself, even when its own environment carries the
// marker (a server can read its marker and could hand it to anything it starts, the warden's parent included).

const SCAN = path.join(ROOT, 'dist/launch/session-scan.js');
const MARKER = 'a'.repeat(32);

describe('the session scan', () => {
  it('finds a same-uid process carrying the marker, and never the scanning process', () => {
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore', env: { MCP_WARDEN_SESSION: MARKER } });
    try {
      const script = `import { SessionScanner } from ${JSON.stringify(SCAN)};
        const found = new SessionScanner({ pgid: undefined, marker: ${JSON.stringify(MARKER)}, cgroup: undefined, uids: [process.getuid()] }).scan();
        process.stdout.write(JSON.stringify({ self: process.pid, found: [...found.values()] }));`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { MCP_WARDEN_SESSION: MARKER }, timeout: 20_000 });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { self: number; found: { pid: number; via: string }[] };
      expect(out.found.map((m) => m.pid)).not.toContain(out.self);
      expect(out.found.map((m) => m.pid)).not.toContain(1);
      expect(out.found).toContainEqual(expect.objectContaining({ pid: holder.pid, via: 'marker' }));
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
