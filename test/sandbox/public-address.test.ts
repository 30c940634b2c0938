import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../src/sandbox/public-address.js';

// Which addresses a granted name may resolve to (src/sandbox/public-address.ts): the spellings a resolver or a
// hostile DNS answer could use for one address are judged alike. The proxy's use of it, in a network namespace of
// its own, is test/sandbox/egress-address.test.ts.

describe('the public-address judgement', () => {
  it.each([
    ['::FFFF:127.0.0.1', 'loopback'], ['0:0:0:0:0:ffff:7f00:1', 'loopback'], ['::ffff:0.0.0.0', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'],
    ['64:ff9b:0:0:0:0:a00:1', 'private'], ['64:FF9B::C0A8:0101', 'private'], ['2002:0a00:0001:0000::', 'private'], ['::ffff:172.20.1.1', 'private'],
    ['FE80::1%eth0', 'private'], ['fd00::', 'private'], ['fbff:ffff::1', 'private'], ['4000::1', 'private'], ['1fff:ffff::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'private'], ['2001:1ff::1', 'private'],
  ])('%s is %s, however it is spelled', (a, c) => expect(classifyAddress(a)).toBe(c));

  it.each(['2001:200::1', '2620:fe::fe', '2a00:1450:4001:80b::200e', '8.8.8.8', '100.128.0.1', '172.32.0.1', '192.169.0.1', '223.255.255.254', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is public',
    (a) => expect(classifyAddress(a)).toBe('public'),
  );

  it.each(['', 'localhost', '010.0.0.1', '1.2.3', '1.2.3.4.5', '::ffff:1.2.3.256', '1:2:3:4:5:6:7:8:9', ':::1', '2001:db8::1::2', '12345::', 'fe80::1%', ' 8.8.8.8'])(
    '%j is not an address, so it is refused',
    (a) => expect(classifyAddress(a)).toBe('private'),
  );
});
