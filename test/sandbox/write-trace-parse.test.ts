import { describe, expect, it } from 'vitest';
import { MAX_LINE, parseTraceLine, TRACE_PROGRAM } from '../../dist/sandbox/write-trace.js';

// The tracer's lines (src/sandbox/write-trace.ts) are parsed strictly: bpftrace prints the path's bytes outside
// printable ASCII as \xNN, so a line is one report whatever the server put in the path; anything else is dropped.

describe('the denied-write tracer', () => {
  it('reads a report: the call by number, the errno, the path cut at its first NUL (what followed is never kept)', () => {
    expect(parseTraceLine(`W 257 30 /usr/evil\\x00\\x88secret${'\\x00'.repeat(40)}`)).toEqual({ kind: 'write', path: '/usr/evil', call: 'openat', errno: 'EROFS' });
    expect(parseTraceLine('W 83 13 /a\\x0ab\\x1b[31m\\x00')).toEqual({ kind: 'write', path: '/a\nb\u001b[31m', call: 'mkdir', errno: 'EACCES' });
    expect(parseTraceLine('W 316 1 \\xc3\\xa9t\\xc3\\xa9\\x00')).toEqual({ kind: 'write', path: 'été', call: 'renameat2', errno: 'EPERM' });
  });

  it('marks a path that filled the 192 bytes read as truncated', () => {
    expect(parseTraceLine(`W 257 30 ${'a'.repeat(192)}`)).toEqual({ kind: 'write', path: 'a'.repeat(192), call: 'openat', errno: 'EROFS', truncated: true });
  });

  it('drops what is not a report: another prefix, an unknown call or errno, a raw control byte, over 192 bytes, an overlong line', () => {
    for (const line of ['Attaching 5 probes...', 'READY', 'T', 'Lost 3 events', 'W 0 30 /x', 'W 257 2 /x', 'W 257 30 /x\u001b', 'w 257 30 /x', `W 257 30 ${'a'.repeat(193)}`, `W 257 30 ${'\\x41'.repeat(MAX_LINE)}`]) expect(parseTraceLine(line)).toBeUndefined();
  });

  it('is one fixed program whose only parameter is the cgroup id, tested first by both programs on raw_syscalls (a call outside the session pays no map lookup)', () => {
    expect(new Set(TRACE_PROGRAM.match(/\$\d/g))).toEqual(new Set(['$1']));
    expect(TRACE_PROGRAM.match(/^tracepoint:raw_syscalls:\w+ \/[^/]*\//gm)).toEqual(['tracepoint:raw_syscalls:sys_enter /cgroup == $1/', 'tracepoint:raw_syscalls:sys_exit /cgroup == $1 && @w[tid]/']);
    expect(TRACE_PROGRAM).toContain('BEGIN { printf("READY\\n"); }');
  });
});
