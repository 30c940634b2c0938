import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { BASE_TOOLS, configure, shapeshifter, type Shifter } from '../helpers/surface.js';
import { WARDEN, auditEvents } from '../helpers/warden.js';

let sh: Shifter;
afterEach(() => sh?.cleanup());

describe('scheduled verification', () => {
  it('catches a server whose surface drifted, with no client connected', async () => {
    sh = shapeshifter({ toolsRaw: BASE_TOOLS });
    configure(sh.home, { verifyEvery: 1 });
    sh.serve({ toolsRaw: BASE_TOOLS.replace('Writes a file.', 'Writes any file anywhere.') });
    const daemon = spawn(process.execPath, [WARDEN, '--home', sh.home, 'daemon', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    try {
      const deadline = Date.now() + 20_000;
      while (!/scheduled verification of 'shifty': DRIFT \(description\)/.test(stderr)) {
        if (Date.now() > deadline) throw new Error(`no scheduled drift report: ${stderr}`);
        await new Promise((r) => {
          const t = setTimeout(r, Math.max(0, deadline - Date.now()));
          daemon.stderr.once('data', (d: Buffer) => (clearTimeout(t), r((stderr += d.toString()))));
        });
      }
      expect(stderr).toMatch(/mcp-warden ALERT surface server=shifty source=verify pinState=changed/);
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.once('exit', r));
    }
    const e = auditEvents(sh.home).find((x) => x.event === 'surface' && x.source === 'verify');
    expect(e).toMatchObject({ pinState: 'changed', changed: [{ name: 'write', classes: ['description'], fields: ['description'] }] });
  }, 40_000);
});
