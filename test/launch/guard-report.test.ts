import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addServer, auditEvents, cli, INITIALIZE, RawSession, SERVERS, tempDir } from '../helpers/warden.js';

// The module guard's report (fd 4 of a node server, an unlinked file in the warden's run directory) is the server's
// to write: a server that floods it must not grow the warden's memory when the report is read back, nor the disk
// without bound, nor have anything learned from it (docs/adr/0014-module-guard-preload.md, "The report's bound").

/** The report's cap (src/launch/guard-report.ts). */
const CAP = 4 * 1024 * 1024;
const NODE = process.execPath;

let dir: string;
let home: string;
let control: string;
let seen: string;
beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  control = path.join(dir, 'control');
  seen = path.join(dir, 'seen.json');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const command = (): string[] => [NODE, path.join(SERVERS, 'guard-flood.mjs'), control, seen];
const seenByServer = (): { written: number; cutTo: number | null } => JSON.parse(fs.readFileSync(seen, 'utf8')) as { written: number; cutTo: number | null };

describe('a server that floods its module guard\'s report', () => {
  it('is refused enrollment with GUARD_REPORT_OVERFLOW, nothing learned from the report, which the warden cut back to its cap while it grew', () => {
    fs.writeFileSync(control, 'flood');
    const r = cli(home, ['add', 'flood', '--yes', '--', ...command()]);
    expect(r.code).toBe(3);
    // The refusal's sentence (GUARD_REPORT_OVERFLOW); `add` prints the message of a lock it could not take.
    expect(r.stdout).toContain(`server 'flood' wrote more than ${CAP} bytes to its module guard's report`);
    expect(r.stdout).toContain('nothing was learned from it');
    // The entry stays added (as after any lock that failed), with no modules recorded and no lock.
    const entry = (JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: Record<string, { modules?: string[] }> }).servers.flood;
    expect(entry).toBeDefined();
    expect(entry?.modules).toBeUndefined();
    expect(r.stdout).not.toContain('/flood/module.mjs');
    const s = seenByServer();
    expect(s.cutTo).not.toBeNull();
    expect(s.cutTo).toBeLessThanOrEqual(CAP);
    expect(s.written).toBeLessThan(64 * 1024 * 1024);
  });

  it('in a run, is recorded as guard_report_overflow (an alert) and the module it reported refused before the flood is still judged', async () => {
    fs.writeFileSync(control, 'serve');
    addServer(home, 'flood', command());
    fs.writeFileSync(control, 'flood');
    const session = new RawSession(home, 'flood');
    session.send(`${INITIALIZE}\n`);
    expect(await session.message(1)).toHaveProperty('result');
    session.close();
    await session.exited;
    const events = auditEvents(home);
    const overflow = events.find((e) => e.event === 'guard_report_overflow');
    expect(overflow).toMatchObject({ server: 'flood', cap: CAP });
    expect(overflow?.bytes).toBeGreaterThan(CAP);
    expect(events.filter((e) => e.event === 'module_refused').map((e) => e.module)).toEqual(['/before-the-flood']);
    expect(session.stderr).toContain('ALERT guard_report_overflow');
    expect(seenByServer().cutTo).toBeLessThanOrEqual(CAP);
  });
});

describe('what the warden read of the report while the session ran', () => {
  it('keeps the refusals a look read after the file is cut to 0, counts the cut as tampering, and says so for a report grown past the cap', async () => {
    const { boundReport, withSeen, parseReport } = await import('../../dist/launch/guard-report.js');
    const file = path.join(dir, 'report');
    const fd = fs.openSync(file, 'a+');
    try {
      const bound = boundReport(fd, 1024);
      bound.stop(); // looks only when asked: no timer in this test
      fs.writeSync(fd, `${JSON.stringify({ refused: '/srv/a.js' })}\n{"refused":"/srv/par`);
      bound.look();
      fs.writeSync(fd, `tial.js"}\n`);
      bound.look();
      fs.ftruncateSync(fd, 0);
      const seenNow = bound.seen();
      expect(seenNow).toMatchObject({ refused: ['/srv/a.js', '/srv/partial.js'], shrank: true });
      expect(withSeen(parseReport('', 'enforce'), seenNow, 0, 1024)).toMatchObject({ refused: ['/srv/a.js', '/srv/partial.js'], overflow: { why: 'shrank', cap: 1024 } });
      fs.ftruncateSync(fd, 2 ** 40); // sparse: cut back to the cap at the next look, read no further than it
      const grown = bound.seen();
      expect(fs.fstatSync(fd).size).toBe(1024);
      expect(withSeen(parseReport('', 'enforce'), grown, 1024, 1024).overflow).toEqual({ bytes: 2 ** 40, cap: 1024, why: 'grew' });
    } finally {
      fs.closeSync(fd);
    }
  });
});
