import { describe, expect, it } from 'vitest';
import { preloadOf } from '../../src/attest/self.js';
import { loaderVariable } from '../../src/store/servers.js';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';

// The one list of loader variables (src/store/servers.ts) and the check of the warden's own start (attest/self.ts).

describe('loader variables a server may not be given', () => {
  it.each([
    'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'NODE_PRESERVE_SYMLINKS', 'NODE_COMPILE_CACHE', 'OPENSSL_CONF',
    'LD_PRELOAD', 'LD_AUDIT', 'LD_LIBRARY_PATH', 'LD_ANYTHING', 'DYLD_INSERT_LIBRARIES', 'GCONV_PATH', 'GLIBC_TUNABLES',
    'PYTHONPATH', 'PYTHONHOME', 'PYTHONSTARTUP', 'PYTHONINSPECT', 'PYTHONUSERBASE', 'PYTHONWARNINGS',
    'PERL5LIB', 'PERL5OPT', 'RUBYOPT', 'RUBYLIB', 'RUBYGEMS_GEMDEPS', 'LUA_INIT_5_4', 'JAVA_TOOL_OPTIONS', 'BASH_ENV', 'ENV', 'SHELLOPTS', 'PS4',
  ])('%s is one', (name) => {
    expect(loaderVariable(name)).toMatch(/^a loader variable: /);
  });

  it.each(['NODE_EXTRA_CA_CERTS', 'NODE_V8_COVERAGE', 'NODE_DEBUG_NATIVE', 'UV_THREADPOOL_SIZE', 'MALLOC_ARENA_MAX', 'PYTHONUNBUFFERED', 'PYTHONIOENCODING', 'HOME', 'GITHUB_TOKEN', 'node_options', 'ld_preload', 'XLD_PRELOAD'])(
    '%s is not (data, tuning, or a name the OS does not fold)',
    (name) => {
      expect(loaderVariable(name)).toBeUndefined();
    },
  );

  it('import refuses a client entry that sets one, with the reason', () => {
    const cfg = parseClientConfig('/home/u/.cursor/mcp.json', JSON.stringify({ mcpServers: { s: { command: '/usr/bin/node', args: ['s.js'], env: { A: '1', NODE_OPTIONS: '--require=/tmp/x.cjs' } } } }));
    expect(classify(cfg.entries[0] as (typeof cfg.entries)[number], '/opt/w/dist/cli/main.js')).toMatchObject({ action: 'refused', reason: expect.stringContaining('"env" sets NODE_OPTIONS, a loader variable') });
  });
});

describe("a preload in the warden's own start", () => {
  it.each([
    [{ NODE_OPTIONS: '--require=/x.cjs' }, [], 'NODE_OPTIONS has --require=/x.cjs'],
    [{ NODE_OPTIONS: '--max-old-space-size=64 -r /x.cjs' }, [], 'NODE_OPTIONS has -r /x.cjs'],
    [{ NODE_OPTIONS: '--import /x.mjs --loader=/l.mjs' }, [], 'NODE_OPTIONS has --import /x.mjs, --loader=/l.mjs'],
    [{ NODE_OPTIONS: '--experimental-loader=/l.mjs' }, [], '--experimental-loader=/l.mjs'],
    [{}, ['--require', '/x.cjs'], 'node was started with --require /x.cjs'],
    [{ LD_PRELOAD: '/x.so' }, [], 'LD_PRELOAD is set (/x.so)'],
    [{ LD_AUDIT: '/a.so' }, [], 'LD_AUDIT is set (/a.so)'],
  ] as [NodeJS.ProcessEnv, string[], string][])('%j %j is found', (env, argv, words) => {
    expect(preloadOf(env, argv)).toContain(words);
  });

  it.each([
    [{ NODE_OPTIONS: '--max-old-space-size=64 --enable-source-maps' }, []],
    [{ LD_PRELOAD: '', LD_LIBRARY_PATH: '/opt/lib' }, []],
    [{}, ['--conditions', 'development', '--experimental-import-meta-resolve']],
  ] as [NodeJS.ProcessEnv, string[]][])('%j %j is not a preload', (env, argv) => {
    expect(preloadOf(env, argv)).toBeUndefined();
  });
});
