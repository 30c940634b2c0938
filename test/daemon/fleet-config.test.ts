import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WardenError } from '../../src/error.js';
import { resolveHome } from '../../src/store/paths.js';
import { loadServers } from '../../src/store/servers.js';
import { tempDir } from '../helpers/warden.js';

// The `fleet` section of servers.json: what it accepts, its defaults, and each refusal with its JSON pointer.

let dir: string;
beforeAll(() => (dir = tempDir('warden-fleet-config-')));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function load(fleet: unknown): ReturnType<typeof loadServers> {
  fs.writeFileSync(path.join(dir, 'servers.json'), JSON.stringify({ version: 1, servers: {}, fleet }), { mode: 0o600 });
  return loadServers(resolveHome(dir));
}

function refusal(fleet: unknown): string {
  try {
    load(fleet);
  } catch (err) {
    expect(err).toBeInstanceOf(WardenError);
    expect((err as WardenError).code).toBe('FILE_INVALID');
    return (err as WardenError).message;
  }
  throw new Error('accepted');
}

const key = '/etc/mcp-warden/fleet.pub.pem';

describe('the fleet section of servers.json', () => {
  it('takes a git, URL or directory source with the documented defaults', () => {
    expect(load({ source: { type: 'git', remote: 'https://git.example.com/team/trust.git', path: 'fleet/setup.bundle.json' }, key }).fleet).toEqual({
      source: { type: 'git', remote: 'https://git.example.com/team/trust.git', path: 'fleet/setup.bundle.json', ref: 'HEAD' },
      key,
      interval: 600,
      timeout: 60,
      env: {},
      passEnv: {},
    });
    for (const remote of ['git@git.example.com:team/trust.git', 'ssh://git@git.example.com/team/trust.git', '/srv/git/trust.git', 'file:///srv/git/trust.git', 'http://127.0.0.1:8080/trust.git']) {
      expect(load({ source: { type: 'git', remote, path: 'b.json' }, key }).fleet?.source).toMatchObject({ remote });
    }
    expect(load({ source: { type: 'url', url: 'https://cdn.example.com/fleet/setup.bundle.json' }, identity: 'https://github.com/acme/trust/.github/workflows/sign.yml@refs/heads/main', issuer: 'https://token.actions.githubusercontent.com' }).fleet?.source.type).toBe('url');
    expect(load({ source: { type: 'directory', directory: '/srv/fleet', path: 'setup.bundle.json' }, key, interval: 60 }).fleet?.interval).toBe(60);
  });

  it('refuses plain http beyond loopback, credentials and queries in a URL', () => {
    expect(refusal({ source: { type: 'url', url: 'http://cdn.example.com/setup.bundle.json' }, key })).toMatch(/at \/fleet\/source\/url.*http is allowed only for a loopback host/);
    expect(refusal({ source: { type: 'url', url: 'https://user:token@cdn.example.com/b.json' }, key })).toContain('no credentials');
    expect(refusal({ source: { type: 'url', url: 'https://cdn.example.com/b.json?sig=abc' }, key })).toContain('query');
    expect(refusal({ source: { type: 'git', remote: 'https://user:token@git.example.com/t.git', path: 'b.json' }, key })).toMatch(/at \/fleet\/source\/remote.*no credentials/);
  });

  it('refuses git transports that run commands, and refs or paths that could be taken for options', () => {
    for (const remote of ['ext::sh -c touch% /tmp/pwned', '--upload-pack=touch /tmp/pwned', 'git://git.example.com/t.git', 'fd::3']) {
      expect(refusal({ source: { type: 'git', remote, path: 'b.json' }, key })).toContain('/fleet/source/remote');
    }
    expect(refusal({ source: { type: 'git', remote: '/srv/t.git', path: 'b.json', ref: '--output=/tmp/x' }, key })).toContain('/fleet/source/ref');
    expect(refusal({ source: { type: 'git', remote: '/srv/t.git', path: '../b.json' }, key })).toContain('/fleet/source/path');
    expect(refusal({ source: { type: 'directory', directory: '/srv/fleet', path: '/etc/passwd' }, key })).toContain('/fleet/source/path');
  });

  it('bounds the interval and the timeout', () => {
    expect(refusal({ source: { type: 'directory', directory: '/srv/fleet', path: 'b.json' }, key, interval: 5 })).toMatch(/\/fleet\/interval.*at least 60 seconds/);
    expect(refusal({ source: { type: 'directory', directory: '/srv/fleet', path: 'b.json' }, key, timeout: 0 })).toContain('/fleet/timeout');
    expect(refusal({ source: { type: 'directory', directory: '/srv/fleet', path: 'b.json' }, key, timeout: 601 })).toContain('/fleet/timeout');
  });

  it('takes exactly one pinned signer: a key, or an identity with its issuer', () => {
    const source = { type: 'directory', directory: '/srv/fleet', path: 'b.json' };
    expect(refusal({ source })).toContain('give the pinned signer');
    expect(refusal({ source, key, identity: 'x', issuer: 'https://issuer.example.com' })).toContain('not both');
    expect(refusal({ source, identity: 'x' })).toContain('"identity" and "issuer" go together');
    expect(refusal({ source, key: 'relative.pem' })).toContain('/fleet/key');
  });

  it('refuses a loader variable among the env values and passEnv names it agrees to', () => {
    const source = { type: 'directory', directory: '/srv/fleet', path: 'b.json' };
    expect(refusal({ source, key, env: { basic: { LD_PRELOAD: '/tmp/x.so' } } })).toContain('/fleet/env/basic');
    expect(refusal({ source, key, passEnv: { basic: ['NODE_OPTIONS'] } })).toContain('/fleet/passEnv/basic/0');
  });
});
