// A minimal DER encoder for the test sigstore PKI (sigstore-cert.ts): just the ASN.1 types an X.509 certificate
// needs, always in the minimal (canonical) form, so @sigstore/core's parse → toDER round trip gives the same bytes.

/** Tag, minimal length, value. */
export function tlv(tag: number, value: Buffer): Buffer {
  const n = value.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, value]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const octets = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const printable = (s: string): Buffer => tlv(0x13, Buffer.from(s, 'ascii'));
export const bool = (b: boolean): Buffer => tlv(0x01, Buffer.from([b ? 0xff : 0x00]));
/** BIT STRING with no unused bits (signatures, key material). */
export const bits = (b: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
/** A context-specific tag: [n] constructed (EXPLICIT wrappers) or primitive (IMPLICIT, e.g. a SAN URI). */
export const ctx = (n: number, value: Buffer, constructed = true): Buffer => tlv((constructed ? 0xa0 : 0x80) | n, value);

/** A non-negative INTEGER from big-endian bytes: leading zeros dropped, one 0x00 added when the top bit is set. */
export function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let v = bytes.subarray(i);
  if ((v[0] ?? 0) & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
  return tlv(0x02, v.length ? v : Buffer.from([0]));
}
export const int = (n: number): Buffer => uint(Buffer.from(n.toString(16).padStart(2 * Math.ceil(n.toString(16).length / 2), '0'), 'hex'));

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * (parts[0] ?? 0) + (parts[1] ?? 0)];
  for (const p of parts.slice(2)) {
    const base128: number[] = [];
    for (let v = p; ; v = Math.floor(v / 128)) {
      base128.unshift((v % 128) | (base128.length ? 0x80 : 0));
      if (v < 128) break;
    }
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5); whole seconds. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

/** A Name of O and CN, PrintableString, as Fulcio's CA names are. */
export const name = (organization: string, commonName: string): Buffer =>
  seq(set(seq(oid('2.5.4.10'), printable(organization))), set(seq(oid('2.5.4.3'), printable(commonName))));
