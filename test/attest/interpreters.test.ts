import { describe, expect, it } from 'vitest';
import { interpreterFamily, scriptIndex, type Family } from '../../src/attest/interpreters.js';

// Which argument of an interpreter's command line is its script. The parse must agree with the interpreter's
// own: an option whose value the warden took for the script (or the reverse) would digest one file and run
// another, so anything not on a family's short list is refused rather than guessed at.

describe('the interpreter family of an executable', () => {
  it.each([
    ['/usr/bin/python3.11', 'python3', 'python'],
    ['/usr/bin/python3', 'python3', 'python'],
    ['/opt/py/bin/python3.13t', 'python3', 'python'],
    ['/usr/bin/pypy3.10', 'pypy3', 'python'],
    ['/usr/bin/dash', 'sh', 'shell'],
    ['/usr/bin/bash', 'bash', 'shell'],
    ['/usr/bin/zsh', 'zsh', 'shell'],
    ['/usr/bin/mksh', 'mksh', 'shell'],
    ['/usr/bin/perl', 'perl', 'perl'],
    ['/usr/bin/perl5.36.0', 'perl', 'perl'],
    ['/usr/bin/ruby3.2', 'ruby', 'ruby'],
    ['/usr/bin/php8.2', 'php', 'php'],
    ['/usr/bin/lua5.4', 'lua', 'lua'],
    ['/usr/bin/luajit', 'luajit', 'lua'],
    ['/usr/bin/node', 'node', 'node'],
    ['/bin/busybox', 'sh', 'shell'],
    ['/bin/busybox', '/bin/ash', 'shell'],
  ])('%s run as %s is %s', (realpath, command, family) => {
    expect(interpreterFamily(realpath, command)).toBe(family);
  });

  it.each([
    ['/usr/bin/python3.11-config', 'python3-config'],
    ['/usr/bin/perldoc', 'perldoc'],
    ['/usr/bin/bashbug', 'bashbug'],
    ['/usr/bin/shellcheck', 'shellcheck'],
    ['/bin/busybox', 'ls'],
    ['/usr/local/bin/mcp-server', 'mcp-server'],
  ])('%s run as %s is no interpreter', (realpath, command) => {
    expect(interpreterFamily(realpath, command)).toBeUndefined();
  });
});

describe('the script of an interpreter command line', () => {
  it.each<[Family, string[], number]>([
    ['python', ['server.py'], 0],
    ['python', ['-u', '-B', 'server.py', '-c', 'x'], 2],
    ['python', ['-uBIsE', 'server.py'], 1],
    ['python', ['-OO', '-P', '--', 'server.py'], 3],
    ['python', ['-Xutf8', '-X', 'dev', '-uXfrozen_modules=off', 'server.py'], 4],
    ['python', ['--', '-server.py'], 1],
    ['shell', ['-eu', 'server.sh', '-c'], 1],
    ['shell', ['-o', 'pipefail', '-x', 'server.sh'], 3],
    ['shell', ['-eo', 'pipefail', 'server.sh'], 2],
    ['shell', ['--', 'server.sh'], 1],
    ['perl', ['-wT', 'server.pl', '-e'], 1],
    ['ruby', ['--disable-gems', '--disable=did_you_mean,error_highlight', '-w', 'server.rb'], 3],
    ['php', ['-n', 'server.php', '--', '-r'], 1],
    ['lua', ['-E', '-W', 'server.lua'], 2],
    ['node', ['--no-warnings', '--max-old-space-size=64', 'server.js'], 2],
    ['node', ['--', 'server.js'], 1],
  ])('%s %j: the script is argument %i', (family, args, at) => {
    expect(scriptIndex(family, 'srv', family, args)).toBe(at);
  });

  it.each<[Family, string[], string]>([
    ['python', ['-c', 'print(1)'], "'-c'"],
    ['python', ['-uc', 'print(1)'], "'-c'"],
    ['python', ['-cprint(1)'], "'-c'"],
    ['python', ['-m', 'http.server'], "'-m'"],
    ['python', ['-Bm', 'http.server'], "'-m'"],
    ['python', ['-W', 'error::pkg.Warning', 'server.py'], "'-W'"],
    ['python', ['-Wd', 'server.py'], "'-W'"],
    ['python', ['-X', 'pycache_prefix=/tmp/pyc', 'server.py'], "'-X pycache_prefix=/tmp/pyc'"],
    ['python', ['-Xpresite=evil', 'server.py'], "'-X presite=evil'"],
    ['python', ['-X'], "'-X'"],
    ['python', ['-i', 'server.py'], "'-i'"],
    ['python', ['-x', 'server.py'], "'-x'"],
    ['python', ['--check-hash-based-pycs', 'never', 'server.py'], "'--check-hash-based-pycs'"],
    ['python', ['-'], "'-' as the script"],
    ['python', [], 'with no script file'],
    ['python', ['-u'], 'with no script file'],
    ['python', ['--'], 'with no script file'],
    ['python', ['--', '-'], "'-' as the script"],
    ['shell', ['-c', 'exec server'], "'-c'"],
    ['shell', ['-ec', 'exec server'], "'-c'"],
    ['shell', ['-s'], "'-s'"],
    ['shell', ['-i', 'server.sh'], "'-i'"],
    ['shell', ['-l', 'server.sh'], "'-l'"],
    ['shell', ['--login', 'server.sh'], "'--login'"],
    ['shell', ['--rcfile', '/tmp/rc', 'server.sh'], "'--rcfile'"],
    ['shell', ['+x', 'server.sh'], "'+x'"],
    ['shell', ['-oe', 'pipefail', 'server.sh'], "'-oe'"],
    ['shell', ['-o', 'posix', 'server.sh'], "'-o posix'"],
    ['shell', ['-O', 'extglob', 'server.sh'], "'-O'"],
    ['shell', ['-', 'server.sh'], "'-' as the script"],
    ['shell', ['-e'], 'with no script file'],
    ['perl', ['-e', 'print 1'], "'-e'"],
    ['perl', ['-we', 'print 1'], "'-e'"],
    ['perl', ['-E', 'say 1'], "'-E'"],
    ['perl', ['-MPOSIX', 'server.pl'], "'-M'"],
    ['perl', ['-mPOSIX', 'server.pl'], "'-m'"],
    ['perl', ['-Ilib', 'server.pl'], "'-I'"],
    ['perl', ['-S', 'server.pl'], "'-S'"],
    ['perl', ['-x', 'server.pl'], "'-x'"],
    ['perl', ['-d:Trace', 'server.pl'], "'-d'"],
    ['ruby', ['-e', 'puts 1'], "'-e'"],
    ['ruby', ['-rjson', 'server.rb'], "'-r'"],
    ['ruby', ['-W', 'server.rb'], "'-W'"],
    ['ruby', ['-C', '/tmp', 'server.rb'], "'-C'"],
    ['ruby', ['--enable=rubyopt', 'server.rb'], "'--enable'"],
    ['php', ['-r', 'echo 1;'], "'-r'"],
    ['php', ['-d', 'auto_prepend_file=/tmp/x.php', 'server.php'], "'-d'"],
    ['php', ['--', 'server.php'], "'--'"],
    ['php', ['-f', 'server.php'], "'-f'"],
    ['lua', ['-e', 'print(1)'], "'-e'"],
    ['lua', ['-l', 'socket', 'server.lua'], "'-l'"],
    ['lua', ['-i', 'server.lua'], "'-i'"],
  ])('%s %j is refused, naming %s', (family, args, named) => {
    let err: { code?: string; message?: string } = {};
    try {
      scriptIndex(family, 'srv', family, args);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('INTERPRETER_OPTION_REFUSED');
    expect(err.message).toContain("server 'srv'");
    expect(err.message).toContain(named);
  });

  it.each([[[]], [['--no-warnings']], [['--']], [['--', '-']], [['--require', 'x.js', 'server.js']]])('node %j is refused (NODE_OPTION_REFUSED)', (args) => {
    expect(() => scriptIndex('node', 'srv', 'node', args)).toThrow(expect.objectContaining({ code: 'NODE_OPTION_REFUSED' }));
  });
});
