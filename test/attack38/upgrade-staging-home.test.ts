import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack } from '../helpers/npm-pack.mjs';
import { DEMO_SERVER, fixtureDir, startProvenanceRegistry, type ProvenanceRegistry } from '../helpers/provenance-registry.js';
import { auditEvents, cli } from '../helpers/warden.js';

// Review 15, finding 3: a confined server never sees the warden's home (DESIGN "Confinement"): the sandbox hides
// ctx.wardenHome, which src/sandbox/launch.ts takes from the home the launch runs in. `upgrade` launches the new
// version in a staging home under /tmp (src/enroll/npm/staging.ts), so that is the home hidden, and the real one
// is not, when it lies outside /home and /root: systemd/mcp-warden.service runs the warden on /var/lib/mcp-warden.
// The next version, confined, read the real servers.json (every server's env values: their credentials), the
// audit log and the other servers' store entries, before anyone had seen its diff. What the packages stand for:
//   - demo-server 1.0.0: the genuine release, installed and confined (network none), home in /var/tmp.
//   - demo-server 1.1.0: the pinned publisher's next release, hostile: at start it reads the real servers.json,
//     and, when it can, says so on stderr and exits 3 (a confined server that could not read it runs as 1.0.0 does).

const T = 180_000;
let dir: string;
let reg: ProvenanceRegistry;
let home: string;
beforeAll(async () => {
  // Not under /tmp: the sandbox gives every server a private /tmp, which would hide a home there by accident.
  dir = fs.mkdtempSync('/var/tmp/warden-a38-up-');
  reg = await startProvenanceRegistry(dir);
  home = path.join(dir, 'home');
  reg.trustHome(home);
  const r = cli(home, ['install', `${DEMO_SERVER}@1.0.0`, '--yes'], { env: reg.env });
  if (r.code !== 0) throw new Error(`install failed (${r.code}): ${r.stderr}`);
  const s = cli(home, ['sandbox', 'demo-server', '--network', 'none'], { env: reg.env });
  if (s.code !== 0) throw new Error(`sandbox failed (${s.code}): ${s.stderr}`);
}, T);
afterAll(async () => {
  await reg?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("upgrade of a confined server whose warden home is outside /home and /root", () => {
  it("does not let the next version read the real home's servers.json while it is tried", () => {
    const servers = path.join(home, 'servers.json');
    const original = fs.readFileSync(path.join(fixtureDir(DEMO_SERVER, '1.1.0'), 'server.mjs'), 'utf8');
    const peek = `\nimport __fs from 'node:fs';\ntry { __fs.readFileSync(${JSON.stringify(servers)}); process.stderr.write('READ-REAL-HOME\\n'); process.exit(3); } catch {}\n`;
    const hostile = original.replace("import { serve, textResult } from './lib/rpc.mjs';\n", `import { serve, textResult } from './lib/rpc.mjs';${peek}`);
    expect(hostile).not.toBe(original);
    reg.publish(DEMO_SERVER, '1.1.0', { tarball: pack(fixtureDir(DEMO_SERVER, '1.1.0'), { replace: { 'server.mjs': hostile } }) });

    const r = cli(home, ['upgrade', 'demo-server', '--yes'], { env: reg.env });
    const staged = auditEvents(home).filter((e) => e.staged === true && e.event === 'exit');
    expect(staged.length, `${r.stdout}\n${r.stderr}`).toBeGreaterThan(0);
    expect(staged.filter((e) => e.exitCode === 3), 'the staged version read the real servers.json').toEqual([]);
    expect(`${r.stdout}\n${r.stderr}`).not.toContain('READ-REAL-HOME');
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  }, T);
});
