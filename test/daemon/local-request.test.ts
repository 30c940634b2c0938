import type http from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostsOf, refusalOf } from '../../src/daemon/local-request.js';

// The admission of the daemon's loopback endpoints (issue 26 item 12) as a relation: a request is answered only
// when its one Host is exactly one of the listening socket's names, and no browser header says a page made it.

/** A request as Node's parser hands it over: raw header pairs in order, and the target. */
const request = (url: string, raw: string[]): http.IncomingMessage => ({ url, rawHeaders: raw }) as unknown as http.IncomingMessage;

describe('which requests the daemon answers', () => {
  it('the names of a socket: its address (bracketed for IPv6) and localhost, with its port; bare only on port 80', () => {
    expect([...hostsOf({ address: '127.0.0.1', family: 'IPv4', port: 9464 })].sort()).toEqual(['127.0.0.1:9464', 'localhost:9464']);
    expect([...hostsOf({ address: '::1', family: 'IPv6', port: 9464 })].sort()).toEqual(['[::1]:9464', 'localhost:9464']);
    expect([...hostsOf({ address: '127.0.0.1', family: 'IPv4', port: 80 })].sort()).toEqual(['127.0.0.1', '127.0.0.1:80', 'localhost', 'localhost:80']);
  });

  it('any Host value that is not one of the socket names, alone or beside an admitted one, is refused 421', () => {
    const hosts = hostsOf({ address: '127.0.0.1', family: 'IPv4', port: 9464 });
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.boolean(), (host, pair) => {
        fc.pre(!hosts.has(host.toLowerCase()));
        const forged = ['Host', host];
        const admitted = ['host', '127.0.0.1:9464'];
        for (const raw of pair ? [[...forged, ...admitted], [...admitted, ...forged]] : [forged]) expect(refusalOf(request('/status', raw), hosts)).toBe(421);
      }),
    );
  });

  it('an admitted Host with any Origin, or a Sec-Fetch-Site other than none, is refused 403; without them it is answered', () => {
    const hosts = hostsOf({ address: '127.0.0.1', family: 'IPv4', port: 9464 });
    expect(refusalOf(request('/metrics', ['Host', '127.0.0.1:9464', 'User-Agent', 'Prometheus/2.53.0', 'Accept', 'text/plain']), hosts)).toBeUndefined();
    expect(refusalOf(request('/metrics', ['Host', 'localhost:9464', 'Sec-Fetch-Site', 'none']), hosts)).toBeUndefined();
    fc.assert(
      fc.property(fc.constantFrom('Origin', 'origin', 'ORIGIN'), fc.string({ maxLength: 30 }), (name, value) => {
        expect(refusalOf(request('/status', ['Host', '127.0.0.1:9464', name, value]), hosts)).toBe(403);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (value) => {
        fc.pre(value !== 'none');
        expect(refusalOf(request('/status', ['Host', '127.0.0.1:9464', 'Sec-Fetch-Site', value]), hosts)).toBe(403);
      }),
    );
  });

  it('a target that is not a path (absolute or asterisk form) is refused 421, on the Unix socket too', () => {
    const hosts = hostsOf({ address: '127.0.0.1', family: 'IPv4', port: 9464 });
    for (const url of ['http://127.0.0.1:9464/status', '*', 'status']) {
      expect(refusalOf(request(url, ['Host', '127.0.0.1:9464']), hosts)).toBe(421);
      expect(refusalOf(request(url, ['Host', 'localhost']), undefined)).toBe(421);
    }
    expect(refusalOf(request('/status', ['Host', 'localhost']), undefined)).toBeUndefined();
    expect(refusalOf(request('/status', ['Host', 'localhost', 'Origin', 'http://evil.example']), undefined)).toBe(403);
  });
});
