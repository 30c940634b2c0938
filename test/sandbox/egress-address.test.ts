import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NODE, ROOT } from '../helpers/warden.js';

// What a granted name may resolve to (src/sandbox/egress-proxy.ts, docs/adr/0060-egress-proxy.md, addendum): only
// public addresses. The proxy runs in a network namespace of its own (bwrap --unshare-net: its loopback only) so
// that no address here, private or public, can be reached off this machine whatever the proxy does; a test
// resolver answers for each granted name, and the namespace's /etc/hosts says 127.0.0.1 for every one of them
// (test/helpers/egress-netns.mjs).

const BWRAP = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].find((f) => fs.existsSync(f));
const MODULE = path.join(ROOT, 'dist/sandbox/egress-proxy.js');
const PUBLIC4 = '93.184.215.14';
const PUBLIC6 = '2606:4700:4700::1111';

/** Loopback and unspecified, in every form that reaches them. */
const LOOPBACK = ['127.0.0.1', '127.3.4.5', '0.0.0.0', '::1', '::', '::ffff:127.0.0.1', '::ffff:7f00:2', '64:ff9b::7f00:1', '2002:7f00:1::1'];
/** Everything else that is not a public address, and the mapped, NAT64 and 6to4 forms of some. */
const PRIVATE = [
  '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '100.64.0.1', '100.127.255.254', '169.254.169.254', '0.1.2.3',
  '224.0.0.251', '239.255.255.250', '255.255.255.255', '240.0.0.1', '192.0.0.170', '192.0.2.1', '198.18.0.1', '198.51.100.1', '203.0.113.1',
  'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%lo', 'fec0::1', 'ff02::1', '100::1', '2001::1', '2001:db8::1', '3fff::1', '5f00::1', '::10.0.0.1',
  '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '::ffff:100.64.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::10.0.0.1', '64:ff9b:1::1', '2002:a00:1::1', '2002:c0a8:101::1',
];

let run: { port: number; answers: Record<string, string>; lookups: Record<string, number>; denied: { host: string; port: number; reason: string; address?: string }[]; received: number; system: Record<string, string> };
const names: Record<string, string> = {};

beforeAll(() => {
  if (!BWRAP) throw new Error('bubblewrap (bwrap) is missing on this host: apt-get install bubblewrap (README, "Test")');
  const script: Record<string, string[][]> = {};
  [...LOOPBACK, ...PRIVATE].forEach((a, i) => {
    names[a] = `n${i}.test`;
    script[`n${i}.test`] = [[a]];
  });
  script['mixed.test'] = [[PUBLIC4, '10.0.0.1']];
  script['rebind.test'] = [[PUBLIC4], ['127.0.0.1']];
  script['public6.test'] = [[PUBLIC6]];
  script['mapped-public.test'] = [[`::ffff:${PUBLIC4}`]];
  script['nat64-public.test'] = [['64:ff9b::5db8:d70e']];
  script['sixtofour-public.test'] = [['2002:5db8:d70e::1']];
  script['garbage.test'] = [['not-an-address']];
  const dir = fs.mkdtempSync('/var/tmp/warden-egress-address-');
  const hosts = path.join(dir, 'hosts');
  fs.writeFileSync(hosts, `127.0.0.1 localhost\n${Object.keys(script).map((n) => `127.0.0.1 ${n}`).join('\n')}\n`);
  try {
    const r = spawnSync(BWRAP, ['--dev-bind', '/', '/', '--unshare-net', '--ro-bind', hosts, '/etc/hosts', '--die-with-parent', '--', NODE, path.join(ROOT, 'test/helpers/egress-netns.mjs'), MODULE, JSON.stringify(script)], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    run = JSON.parse(r.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const denial = (host: string) => run.denied.filter((d) => d.host === host);

describe('a granted name resolving to a non-public address', () => {
  it('the trap is armed: the namespace\'s own resolver says 127.0.0.1 for every granted name', () => {
    expect(new Set(Object.values(run.system))).toEqual(new Set(['127.0.0.1']));
  });

  it.each(LOOPBACK)('is refused 403 when it resolves to %s, recorded as loopback_address with the address', (a) => {
    const n = names[a] as string;
    expect(run.answers[n]).toBe('HTTP/1.1 403 Forbidden');
    expect(denial(n)).toEqual([{ kind: 'connect', host: n, port: run.port, reason: 'loopback_address', address: a }]);
  });

  it.each(PRIVATE)('is refused 403 when it resolves to %s, recorded as private_address with the address', (a) => {
    const n = names[a] as string;
    expect(run.answers[n]).toBe('HTTP/1.1 403 Forbidden');
    expect(denial(n)).toEqual([{ kind: 'connect', host: n, port: run.port, reason: 'private_address', address: a }]);
  });

  it('is refused when any one of its addresses is private, even if the first is public', () => {
    expect(run.answers['mixed.test']).toBe('HTTP/1.1 403 Forbidden');
    expect(denial('mixed.test')).toEqual([{ kind: 'connect', host: 'mixed.test', port: run.port, reason: 'private_address', address: '10.0.0.1' }]);
  });

  it('is refused when an answer is not an address at all (fail closed)', () => {
    expect(run.answers['garbage.test']).toBe('HTTP/1.1 403 Forbidden');
    expect(denial('garbage.test')).toMatchObject([{ reason: 'private_address' }]);
  });

  it('never reached the upstream on the namespace\'s loopback, for any name', () => {
    expect(run.received).toBe(0);
  });
});

describe('a granted name resolving to a public address', () => {
  it.each(['public6.test', 'mapped-public.test', 'nat64-public.test', 'sixtofour-public.test'])('%s is let through: the proxy tries it (no route in the namespace: 502), no denial', (n) => {
    expect(run.answers[n]).toBe('HTTP/1.1 502 Bad Gateway');
    expect(denial(n)).toEqual([]);
  });

  it('is connected to at the very address checked: resolved once, never again by name (a rebinding to 127.0.0.1 on a second lookup, or in /etc/hosts, is never reached)', () => {
    expect(run.answers['rebind.test']).toBe('HTTP/1.1 502 Bad Gateway');
    expect(run.lookups['rebind.test']).toBe(1);
    expect(denial('rebind.test')).toEqual([]);
    expect(run.received).toBe(0);
  });

  it('each granted name was looked up exactly once for its one connection', () => {
    expect(Object.values(run.lookups).every((n) => n === 1)).toBe(true);
    expect(Object.keys(run.lookups).length).toBe(Object.keys(run.answers).length);
  });
});
