import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { perTestDirs } from '../helpers/warden.js';

// ATTACK (sandbox, network domains; ADR 0060): the proxy refuses a granted name that resolves to a loopback or
// unspecified address (src/sandbox/egress-proxy.ts isLoopbackOrAny), so the owner of a granted name cannot point it
// at the host's own services. The test is textual: /^127\./, '::1', '0.0.0.0', '::', /^::ffff:127\./. A name whose
// AAAA record is the IPv4-mapped unspecified address ::ffff:0.0.0.0 passes it, and Linux connects to the v4
// unspecified address as to the host's loopback: the tunnel reaches a service on the host's 127.0.0.1. The name
// resolves through an /etc/hosts of the test's own (bubblewrap binds it for the proxy's process only).
// Asserts the secure behaviour: 403, one sandbox_denied with reason loopback_address, the service never reached.

const tmp = perTestDirs();
const DIST = path.resolve('dist');
const PROBE = path.resolve('test/attack33/proxy-under-hosts.mjs');

function probe(hosts: string, names: string[]): { results: { name: string; status: string; reachedLoopback: boolean }[]; denied: unknown[]; reached: number } {
  const file = path.join(tmp.dir, 'hosts');
  fs.writeFileSync(file, hosts);
  const out = execFileSync('bwrap', ['--bind', '/', '/', '--ro-bind', file, '/etc/hosts', '--dev', '/dev', '--', process.execPath, PROBE, DIST, ...names], { encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(out);
}

describe("the egress proxy's refusal of a granted name that resolves to the host's loopback", () => {
  it('refuses a name resolving to ::ffff:127.0.0.1 as it refuses one resolving to ::ffff:0.0.0.0 (403, loopback_address), and the host loopback service is never reached', () => {
    const r = probe('::ffff:127.0.0.1 mapped.warden-test.example\n::ffff:0.0.0.0 unspecified.warden-test.example\n', ['mapped.warden-test.example', 'unspecified.warden-test.example']);
    expect(r.results).toEqual([
      { name: 'mapped.warden-test.example', status: 'HTTP/1.1 403 Forbidden', reachedLoopback: false },
      { name: 'unspecified.warden-test.example', status: 'HTTP/1.1 403 Forbidden', reachedLoopback: false },
    ]);
    expect(r.denied).toEqual([
      { kind: 'connect', host: 'mapped.warden-test.example', port: expect.any(Number), reason: 'loopback_address', address: '::ffff:127.0.0.1' },
      { kind: 'connect', host: 'unspecified.warden-test.example', port: expect.any(Number), reason: 'loopback_address', address: '::ffff:0.0.0.0' },
    ]);
    expect(r.reached).toBe(0);
  });
});
