import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireHost } from '../helpers/host.js';
import { tempDir } from '../helpers/warden.js';

// The shipped systemd units, checked by systemd itself (`systemd-analyze verify`, offline) and for the
// settings the daemon relies on. The warden binary is not installed here, so ExecStart points at /bin/true in
// the copy that is verified; everything else is verified as shipped.

const UNITS = path.join(import.meta.dirname, '../../systemd');
const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function verify(unit: string, user: boolean): { status: number | null; output: string } {
  requireHost('systemd-analyze');
  const text = fs.readFileSync(path.join(UNITS, unit), 'utf8').replace(/^ExecStart=\S+/m, 'ExecStart=/bin/true');
  const copy = path.join(dir, unit);
  fs.writeFileSync(copy, text);
  const runtime = path.join(dir, 'runtime');
  fs.mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const r = spawnSync('systemd-analyze', [...(user ? ['--user'] : []), 'verify', '--man=no', copy], { encoding: 'utf8', env: { ...process.env, XDG_RUNTIME_DIR: runtime } });
  return { status: r.status, output: `${r.stdout}${r.stderr}${r.error?.message ?? ''}` };
}

describe.each([
  ['mcp-warden.service', false],
  ['mcp-warden.user.service', true],
])('the unit %s', (unit, user) => {
  const text = fs.readFileSync(path.join(UNITS, unit), 'utf8');

  it('passes systemd-analyze verify with nothing to say', () => {
    expect(verify(unit, user)).toEqual({ status: 0, output: '' });
  });

  it('is Type=notify with a watchdog, notifications from the main process only', () => {
    expect(text).toMatch(/^Type=notify$/m);
    expect(text).toMatch(/^NotifyAccess=main$/m);
    expect(text).toMatch(/^WatchdogSec=\d+s$/m);
  });

  it('is hardened without MemoryDenyWriteExecute, which breaks V8', () => {
    for (const line of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes', 'SystemCallFilter=@system-service', 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6']) expect(text).toContain(`\n${line}\n`);
    expect(text).not.toMatch(/^MemoryDenyWriteExecute/m);
  });
});
