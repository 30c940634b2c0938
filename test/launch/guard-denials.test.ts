import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guardDenialLines, parseGuardDenial, type GuardDenial, type GuardRead } from '../../dist/launch/guard-denials.js';
import { boundReport } from '../../dist/launch/guard-report.js';

// The warden's reading of the denied writes a node server's module guard reports (src/launch/guard-denials.ts):
// the report file is the server's to write, so every line is the server's word, checked and bounded here. A real
// file and the reader; the guard's side runs in test/sandbox/guard-denials.test.ts.

let dir: string;
let file: string;
let fd: number;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-denials-'));
  file = path.join(dir, 'report');
  fd = fs.openSync(file, 'a+');
});
afterEach(() => {
  fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
});

const line = (d: Record<string, unknown>): string => `${JSON.stringify({ denied: d })}\n`;

describe('reading the guard\'s reports of denied writes', () => {
  it('a report is taken with source guard; another errno, an unknown call name, an empty or overlong path, a record of the guard\'s and garbage are not reports', () => {
    expect(parseGuardDenial(line({ call: 'open', errno: 'EROFS', path: '/usr/x' }).trim())).toEqual({ kind: 'write', path: '/usr/x', call: 'open', errno: 'EROFS', source: 'guard' });
    expect(parseGuardDenial(line({ call: 'open', errno: 'ENOENT', path: '/usr/x' }).trim())).toBeUndefined();
    expect(parseGuardDenial(line({ call: 'open\u001b[31m', errno: 'EROFS', path: '/usr/x' }).trim())).toBeUndefined();
    expect(parseGuardDenial(line({ call: 'open', errno: 'EROFS', path: '' }).trim())).toBeUndefined();
    expect(parseGuardDenial(line({ call: 'open', errno: 'EROFS', path: 'x'.repeat(1025) }).trim())).toBeUndefined();
    expect(parseGuardDenial(JSON.stringify({ refused: '/x' }))).toBeUndefined();
    expect(parseGuardDenial('{"denied": nonsense')).toBeUndefined();
    expect(parseGuardDenial(line({ call: 'open', errno: 'EROFS', path: '/usr/x', truncated: true, source: 'kernel' }).trim())).toEqual({ kind: 'write', path: '/usr/x', call: 'open', errno: 'EROFS', truncated: true, source: 'guard' });
  });

  it('the watch gives what was appended since its last look, drops a line longer than a report whole (no tail of it read as a report), and stops at its bound', () => {
    const got: (GuardDenial | GuardRead)[] = [];
    const w = boundReport(fd, undefined, guardDenialLines((d) => got.push(d), 3));
    fs.appendFileSync(file, `${JSON.stringify({ path: '/learned', key: '' })}\n${line({ call: 'mkdir', errno: 'EACCES', path: '/a' })}`);
    fs.appendFileSync(file, `${'y'.repeat(300 * 1024)}${line({ call: 'open', errno: 'EROFS', path: '/hidden-in-a-long-line' })}`);
    fs.appendFileSync(file, line({ call: 'open', errno: 'EPERM', path: '/b' }) + line({ call: 'open', errno: 'EROFS', path: '/c' }) + line({ call: 'open', errno: 'EROFS', path: '/d' }));
    w.seen();
    w.stop();
    expect(got.map((d) => d.path)).toEqual(['/a', '/b', '/c']);
  });

  it('after the report file is cut below what the watch had read, a denial written after the cut is still given', () => {
    const got: (GuardDenial | GuardRead)[] = [];
    const w = boundReport(fd, undefined, guardDenialLines((d) => got.push(d), 64));
    w.stop(); // looks only when asked: no timer in this test
    fs.appendFileSync(file, line({ call: 'open', errno: 'EROFS', path: `/usr/${'a'.repeat(200)}` }));
    w.look();
    fs.ftruncateSync(fd, 0); // the server cuts its report (alerted as guard_report_overflow why shrank elsewhere)
    fs.appendFileSync(file, line({ call: 'open', errno: 'EROFS', path: '/usr/b' }));
    w.look();
    fs.appendFileSync(file, line({ call: 'mkdir', errno: 'EACCES', path: '/usr/c' }));
    w.seen();
    expect(got.map((d) => d.path)).toEqual([`/usr/${'a'.repeat(200)}`, '/usr/b', '/usr/c']);
  });

  it('a read report is taken only for a path of the list the warden gave the guard, as that path', () => {
    const secrets = ['/home/u/.ssh/id_rsa'];
    expect(parseGuardDenial(JSON.stringify({ read: { path: '/home/u/.ssh/id_rsa' } }), secrets)).toEqual({ kind: 'read', path: '/home/u/.ssh/id_rsa', reason: 'guard' });
    expect(parseGuardDenial(JSON.stringify({ read: { path: '/home/u/.ssh/id_rsa\u001b[31m' } }), secrets)).toBeUndefined();
    expect(parseGuardDenial(JSON.stringify({ read: { path: '/etc/passwd' } }), secrets)).toBeUndefined();
    expect(parseGuardDenial(JSON.stringify({ read: { path: '/home/u/.ssh/id_rsa' } }))).toBeUndefined();
  });
});
