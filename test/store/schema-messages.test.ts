import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAllowlist } from '../../src/store/allowlist.js';
import { loadImports } from '../../src/store/imports.js';
import { resolveHome, type HomePaths } from '../../src/store/paths.js';
import { loadServers } from '../../src/store/servers.js';
import { parseToolsLock } from '../../src/surface/lockfile.js';
import { parseWardenLock } from '../../src/surface/warden-lock.js';
import { tempDir } from '../helpers/warden.js';

// What a user reads when a trust file breaks its schema: a plain sentence naming the file, the JSON pointer
// and the kind of problem (unknown key, missing key, wrong type, value not allowed, bad pattern), and what to
// do, never the schema library's own words ("Invalid key: Expected never but received ...").

const LIBRARY_WORDS = /Invalid (key|type|integer|length|value)|Expected .* but received|Received /;

let dir: string;
let paths: HomePaths;
beforeEach(() => {
  dir = tempDir();
  paths = resolveHome(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function problem(load: () => unknown, file: string, value: unknown): string {
  fs.writeFileSync(path.join(dir, file), JSON.stringify(value), { mode: 0o600 });
  try {
    load();
  } catch (err) {
    const message = (err as Error).message;
    expect(message).not.toMatch(LIBRARY_WORDS);
    expect(message).toContain(path.join(dir, file));
    return message;
  }
  throw new Error(`${file} was accepted: ${JSON.stringify(value)}`);
}

const servers = (value: unknown): string => problem(() => loadServers(paths), 'servers.json', value);
const server = (entry: Record<string, unknown>): string => servers({ version: 1, servers: { fx: entry } });

describe('servers.json', () => {
  it('a number a double cannot hold as written: refused with its pointer, never used as another value', () => {
    fs.writeFileSync(path.join(dir, 'servers.json'), '{"version":1,"servers":{"fx":{"command":"/bin/true","canaryLatency":{"factor":1.00000000000000000001,"slackMs":5}}}}', { mode: 0o600 });
    expect(() => loadServers(paths)).toThrow(/has a number a double cannot hold as written, at \/servers\/fx\/canaryLatency\/factor \(1\.00000000000000000001\)/);
    fs.writeFileSync(path.join(dir, 'servers.json'), '{"version":1,"servers":{"fx":{"command":"/bin/true","canaryLatency":{"factor":1.50,"slackMs":5e1}}}}', { mode: 0o600 });
    expect(loadServers(paths).servers.fx?.canaryLatency).toEqual({ factor: 1.5, slackMs: 50 });
  });

  it('an unknown key: names it and the object it is in, and says to remove it or upgrade', () => {
    const m = server({ command: '/bin/true', quarantine: {} });
    expect(m).toContain("unknown key 'quarantine' in servers.json at /servers/fx");
    expect(m).toMatch(/remove it, or upgrade mcp-warden if a newer version wrote it/i);
  });

  it('an unknown key that is a near miss of a known one: suggests it', () => {
    expect(server({ command: '/bin/true', passenv: ['HOME'] })).toContain("unknown key 'passenv' in servers.json at /servers/fx (did you mean 'passEnv'?)");
    expect(servers({ version: 1, server: {} })).toContain("(did you mean 'servers'?)");
  });

  it('a missing key', () => {
    expect(server({ args: [] })).toContain("missing key 'command' in servers.json at /servers/fx");
    expect(servers({ version: 1 })).toContain("missing key 'servers' in servers.json at /");
    expect(servers({ version: 1, alerts: [{ url: 'https://x' }], servers: {} })).toContain("missing key 'type' in servers.json at /alerts/0: expected \"stderr\" or \"webhook\" or \"exec\" or \"journald\"");
  });

  it('a value of the wrong type: what was expected and what was found', () => {
    expect(server({ command: 5 })).toContain('wrong type in servers.json at /servers/fx/command: expected a string, found the number 5');
    expect(server({ command: '/bin/true', args: 'x' })).toContain('wrong type in servers.json at /servers/fx/args: expected a list, found the string "x"');
    expect(server({ command: '/bin/true', args: ['ok', 7] })).toContain('at /servers/fx/args/1: expected a string, found the number 7');
    expect(server({ command: '/bin/true', env: [] })).toContain('at /servers/fx/env: expected an object, found a list');
    expect(servers(null)).toContain('wrong type in servers.json at /: expected an object, found null');
  });

  it('a value that is not one of the allowed ones: lists them', () => {
    expect(server({ command: '/bin/true', posture: 'warn' })).toContain('value "warn" is not allowed in servers.json at /servers/fx/posture: use one of "enforce", "monitor"');
    expect(servers({ version: 1, alerts: [{ type: 'pager' }], servers: {} })).toContain('value "pager" is not allowed in servers.json at /alerts/0/type: use one of "stderr", "webhook", "exec", "journald"');
    expect(servers({ version: 1, writeTracing: 'no', servers: {} })).toContain('value "no" is not allowed in servers.json at /writeTracing: use one of "auto", "off"');
    expect(servers({ version: 1, writeTracing: false, servers: {} })).toMatch(/servers\.json at \/writeTracing/);
  });

  it('another version of the file', () => {
    expect(servers({ version: 2, servers: {} })).toMatch(/version 2 of servers\.json .*at \/version.* reads version 1.*upgrade mcp-warden/i);
  });

  it('a value or a key that does not match its pattern: the value and what was expected', () => {
    expect(servers({ version: 1, servers: { 'bad id!': { command: 'x' } } })).toContain('bad key "bad id!" in servers.json at /servers: expected a server id');
    expect(server({ command: 'x', env: { 'A-B': 'x' } })).toContain('bad key "A-B" in servers.json at /servers/fx/env: expected an environment variable name');
    expect(server({ command: 'x', cwd: 'rel' })).toContain('bad value "rel" in servers.json at /servers/fx/cwd: expected an absolute path');
    expect(servers({ version: 1, path: '/usr/bin:bin', servers: {} })).toContain('bad value "/usr/bin:bin" in servers.json at /path: every directory of the trusted path must be absolute');
  });

  it('numbers out of range or not whole', () => {
    expect(server({ command: 'x', relistEvery: { calls: 1.5, seconds: 10 } })).toContain('bad value 1.5 in servers.json at /servers/fx/relistEvery/calls: expected a whole number');
    expect(server({ command: 'x', verifyEvery: -1 })).toContain('bad value -1 in servers.json at /servers/fx/verifyEvery: expected seconds (0: never)');
    expect(servers({ version: 1, alerts: [{ type: 'webhook', url: 'https://x', retries: 11 }], servers: {} })).toContain('at /alerts/0/retries: expected at most 10');
  });

  it('always ends with what to do', () => {
    expect(server({ command: 5 })).toMatch(/Fix that value and run the command again\.$/);
    expect(server({ args: [] })).toMatch(/Add it \(docs\/formats\.md lists the keys of each file\) and run the command again\.$/);
  });
});

describe('allowlist.json', () => {
  const allowlist = (entry: Record<string, unknown>): string => problem(() => loadAllowlist(paths), 'allowlist.json', { version: 1, entries: [{ path: '/usr/bin/node', kind: 'executable', sha256: 'a'.repeat(64), addedAt: '2026-11-29T00:00:00Z', ...entry }] });

  it('each kind of problem, with its pointer', () => {
    expect(allowlist({ sha256: 'abc' })).toContain('bad value "abc" in allowlist.json at /entries/0/sha256: expected 64 lowercase hex digits');
    expect(allowlist({ kind: 'exe' })).toContain('value "exe" is not allowed in allowlist.json at /entries/0/kind: use one of "executable", "script", "package"');
    expect(allowlist({ why: 'x' })).toContain("unknown key 'why' in allowlist.json at /entries/0");
    expect(allowlist({ addedAt: 'yesterday' })).toContain('bad value "yesterday" in allowlist.json at /entries/0/addedAt: expected an ISO 8601 timestamp');
    expect(allowlist({ trustOnFirstUse: 'yes' })).toContain('at /entries/0/trustOnFirstUse: expected true or false, found the string "yes"');
  });
});

describe('imports.json', () => {
  it('names the problem the same way', () => {
    const m = problem(() => loadImports(paths), 'imports.json', { version: 1, files: { '/x.json': { client: 'cursor', entries: [], extra: 1 } } });
    expect(m).toContain("unknown key 'extra' in imports.json at /files/~1x.json");
  });
});

describe('the lockfiles', () => {
  const lockProblem = (parse: () => unknown): string => {
    try {
      parse();
    } catch (err) {
      const message = (err as Error).message;
      expect(message).not.toMatch(LIBRARY_WORDS);
      return message;
    }
    throw new Error('accepted');
  };

  it('warden.lock: an unknown key, a missing key, a bad digest', () => {
    const entry = { catalogs: {}, h_catalogs: `sha256:${'0'.repeat(64)}`, conditional: [], artifacts: [], tools: {} };
    const doc = (e: Record<string, unknown>): string => JSON.stringify({ warden_lock_version: 1, servers: { b: { ...entry, ...e } } });
    expect(lockProblem(() => parseWardenLock(Buffer.from(doc({ rules: {} }))))).toContain("unknown key 'rules' in warden.lock at /servers/b");
    expect(lockProblem(() => parseWardenLock(Buffer.from(JSON.stringify({ warden_lock_version: 1, servers: { b: { catalogs: {} } } }))))).toContain("missing key 'h_catalogs' in warden.lock at /servers/b");
    expect(lockProblem(() => parseWardenLock(Buffer.from(doc({ h_catalogs: 'md5:x' }))))).toContain('bad value "md5:x" in warden.lock at /servers/b/h_catalogs: expected sha256:<64 hex digits>');
  });

  it('tools.lock (checked by hand, not by a schema library): an unknown field names its pointer', () => {
    const m = lockProblem(() => parseToolsLock(JSON.stringify({ lockfile_version: 1, servers: {}, extra: 1 })));
    expect(m).toMatch(/unknown field "extra"/);
  });
});
