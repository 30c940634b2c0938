import net from 'node:net';

// Which addresses the egress proxy may connect a granted name to (docs/adr/0060-egress-proxy.md, addendum): public
// ones only. IPv4 is public unless it lies in a special-purpose range (IANA's registry, the ranges not globally
// reachable); IPv6 is public only inside 2000::/3, the global unicast space, and outside its special ranges (so
// an address nobody has allocated is refused, not guessed at). The forms that carry an IPv4 address are judged
// by that address: IPv4-mapped (::ffff:0:0/96), the NAT64 well-known prefix (64:ff9b::/96, RFC 6052) and 6to4
// (2002::/16, RFC 3056: a host with a 6to4 route sends the packet to the embedded IPv4 address). Everything else
// that embeds one in a way a name's owner could aim (Teredo 2001::/32, IPv4-compatible ::/96, local-use NAT64
// 64:ff9b:1::/48) is refused whole.

/** What an address is to the proxy: a public address, the host itself (loopback, unspecified), or private. */
export type AddressClass = 'public' | 'loopback' | 'private';

const v4Special = new net.BlockList();
for (const [a, p] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) v4Special.addSubnet(a, p, 'ipv4');

const v6Special = new net.BlockList();
for (const [a, p] of [
  ['::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['3fff::', 20], ['5f00::', 16],
] as const) v6Special.addSubnet(a, p, 'ipv6');

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad allowed), or undefined. */
function words(a: string): number[] | undefined {
  let text = a;
  const tail: number[] = [];
  const quad = /^(.*:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(a);
  if (quad) {
    if (!net.isIPv4(quad[2] as string)) return undefined;
    const b = (quad[2] as string).split('.').map(Number) as [number, number, number, number];
    tail.push((b[0] << 8) | b[1], (b[2] << 8) | b[3]);
    text = (quad[1] as string).endsWith('::') ? (quad[1] as string) : (quad[1] as string).slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (s: string): number[] | undefined => {
    if (s === '') return [];
    const ws = s.split(':');
    return ws.every((w) => /^[0-9a-fA-F]{1,4}$/.test(w)) ? ws.map((w) => Number.parseInt(w, 16)) : undefined;
  };
  const head = parse(halves[0] as string);
  const rest = halves.length === 2 ? parse(halves[1] as string) : [];
  if (!head || !rest) return undefined;
  const fill = 8 - tail.length - head.length - rest.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return undefined;
  return [...head, ...new Array<number>(fill).fill(0), ...rest, ...tail];
}

const dotted = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

function classify4(a: string): AddressClass {
  if (/^127\./.test(a) || a === '0.0.0.0') return 'loopback';
  return v4Special.check(a, 'ipv4') ? 'private' : 'public';
}

/** The class of `address` (an IP literal as a resolver answers it, a zone index allowed); anything that is not
 *  an IP literal is private, so it is refused. */
export function classifyAddress(address: string): AddressClass {
  const a = address.replace(/%[A-Za-z0-9_.-]{1,64}$/, '');
  if (net.isIPv4(a)) return classify4(a);
  if (!net.isIPv6(a)) return 'private';
  const w = words(a);
  if (!w) return 'private';
  if (w.every((x) => x === 0) || (w.slice(0, 7).every((x) => x === 0) && w[7] === 1)) return 'loopback';
  const top = w.slice(0, 6);
  if (top.slice(0, 5).every((x) => x === 0) && top[5] === 0xffff) return classify4(dotted(w[6] as number, w[7] as number));
  if (w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0)) return classify4(dotted(w[6] as number, w[7] as number));
  if (w[0] === 0x2002) return classify4(dotted(w[1] as number, w[2] as number));
  if (((w[0] as number) & 0xe000) !== 0x2000) return 'private';
  return v6Special.check(a, 'ipv6') ? 'private' : 'public';
}
