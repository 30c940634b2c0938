import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import * as v from 'valibot';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { toTrustMaterial, VerificationError, type TrustMaterial } from '@sigstore/verify';
import { WardenError } from '../error.js';

// The sigstore trust material verification runs against, offline: the public-good trusted root (Fulcio CAs,
// Rekor and CT log keys, timestamp authorities, each with its validity window) and the npm registry's
// attestation keys. mcp-warden ships one (shipped-root.ts, dated); `trust-root update` stores a newer one in
// the home, which then wins. Nothing here fetches anything (docs/adr/0017-offline-provenance.md).

const validFor = v.object({ start: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')), end: v.optional(v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp'))) });
const publicKey = v.object({ rawBytes: v.pipe(v.string(), v.base64('expected base64')), keyDetails: v.string(), validFor: v.optional(validFor) });

/** The parts of a sigstore trusted_root.json that verification reads (unknown fields are kept, not judged). */
export const trustedRootSchema = v.looseObject({
  mediaType: v.pipe(v.string(), v.startsWith('application/vnd.dev.sigstore.trustedroot', 'expected a sigstore trusted root media type')),
  tlogs: v.pipe(v.array(v.looseObject({ baseUrl: v.string(), publicKey })), v.minLength(1, 'expected at least one transparency log')),
  certificateAuthorities: v.pipe(v.array(v.looseObject({ uri: v.optional(v.string()), validFor: v.optional(validFor) })), v.minLength(1, 'expected at least one certificate authority')),
  ctlogs: v.array(v.looseObject({ baseUrl: v.string(), publicKey })),
  timestampAuthorities: v.optional(v.array(v.looseObject({ uri: v.optional(v.string()), validFor: v.optional(validFor) })), []),
});

/** The npm registry's keys.json, as its TUF target `registry.npmjs.org/keys.json` holds it. */
export const npmKeysSchema = v.object({
  keys: v.pipe(v.array(v.looseObject({ keyId: v.string(), keyUsage: v.string(), publicKey })), v.minLength(1, 'expected at least one key')),
});

export const trustRootDataSchema = v.object({
  /** When this material was taken: a signature made after it may need keys it does not know. */
  date: v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 timestamp')),
  /** Where it came from, for `trust-root show`. */
  source: v.string(),
  trustedRoot: trustedRootSchema,
  npmKeys: npmKeysSchema,
});
export type TrustRootData = v.InferInput<typeof trustRootDataSchema>;

/** A trust root ready to verify with, and what `trust-root show` tells about it. */
export interface TrustRoot {
  data: TrustRootData;
  /** Where the data was read from (the home's file, or "shipped with mcp-warden"). */
  origin: string;
  material: TrustMaterial;
}

/** The validity window of each authority, for `trust-root show` and for the staleness judgement. */
export interface Authority {
  kind: 'certificate authority' | 'transparency log' | 'CT log' | 'timestamp authority' | 'npm attestation key';
  name: string;
  start: string;
  end?: string;
  /** sha256 (hex) of its key material (certificate chain or public key): names say nothing about the key. */
  key: string;
}

/** Builds the trust material; `origin` names where `data` came from in any refusal. */
export function openTrustRoot(data: unknown, origin: string): TrustRoot {
  const parsed = v.safeParse(trustRootDataSchema, data);
  if (!parsed.success) {
    const where = parsed.issues[0]?.path?.map((p) => String(p.key)).join('/') ?? '';
    throw new WardenError('TRUST_ROOT_INVALID', `the sigstore trust root ${origin} is not valid (${where ? `at /${where}: ` : ''}${parsed.issues[0]?.message}). Import a good one with: mcp-warden trust-root update --from FILE`);
  }
  const keys = parsed.output.npmKeys.keys.filter((k) => k.keyUsage === 'npm:attestations');
  let material: TrustMaterial;
  try {
    material = toTrustMaterial(TrustedRoot.fromJSON(parsed.output.trustedRoot), (hint) => {
      const key = keys.find((k) => k.keyId === hint);
      if (!key) throw new VerificationError({ code: 'PUBLIC_KEY_ERROR', message: `key not found: ${hint}` });
      const { start, end } = key.publicKey.validFor ?? { start: '1970-01-01T00:00:00Z' };
      return {
        publicKey: cryptoKey(key.publicKey.rawBytes),
        validFor: (date: Date) => new Date(start) <= date && (end === undefined || date <= new Date(end)),
      };
    });
  } catch (err) {
    throw new WardenError('TRUST_ROOT_INVALID', `the sigstore trust root ${origin} could not be read (${err instanceof Error ? err.message : String(err)}). Import a good one with: mcp-warden trust-root update --from FILE`);
  }
  return { data: parsed.output, origin, material };
}

function cryptoKey(base64Der: string): KeyObject {
  return createPublicKey({ key: Buffer.from(base64Der, 'base64'), format: 'der', type: 'spki' });
}

/** Every authority of the root with its window, in the order the root lists them. */
export function authoritiesOf(data: TrustRootData): Authority[] {
  const r = data.trustedRoot;
  const win = (w: { start: string; end?: string } | undefined) => ({ start: w?.start ?? '1970-01-01T00:00:00Z', ...(w?.end ? { end: w.end } : {}) });
  const key = (material: unknown): { key: string } => ({ key: createHash('sha256').update(JSON.stringify(material ?? null)).digest('hex') });
  return [
    ...r.certificateAuthorities.map((c) => ({ kind: 'certificate authority' as const, name: c.uri ?? '(unnamed)', ...win(c.validFor), ...key(c['certChain']) })),
    ...r.tlogs.map((t) => ({ kind: 'transparency log' as const, name: t.baseUrl, ...win(t.publicKey.validFor), ...key(t.publicKey.rawBytes) })),
    ...r.ctlogs.map((t) => ({ kind: 'CT log' as const, name: t.baseUrl, ...win(t.publicKey.validFor), ...key(t.publicKey.rawBytes) })),
    ...(r.timestampAuthorities ?? []).map((t) => ({ kind: 'timestamp authority' as const, name: t.uri ?? '(unnamed)', ...win(t.validFor), ...key(t['certChain']) })),
    ...data.npmKeys.keys.filter((k) => k.keyUsage === 'npm:attestations').map((k) => ({ kind: 'npm attestation key' as const, name: k.keyId, ...win(k.publicKey.validFor), ...key(k.publicKey.rawBytes) })),
  ];
}

/**
 * Whether, at `at`, every authority of one of the kinds `needs` has a window that is closed (ended before, or
 * not yet begun): a signature made then cannot verify under this root, whatever the package.
 */
export function windowsClosed(root: TrustRoot, at: Date | undefined, needs: Authority['kind'][]): boolean {
  if (!at) return false;
  const all = authoritiesOf(root.data);
  return needs.some((kind) => {
    const ofKind = all.filter((a) => a.kind === kind);
    return ofKind.length > 0 && ofKind.every((a) => new Date(a.start) > at || (a.end !== undefined && new Date(a.end) < at));
  });
}
