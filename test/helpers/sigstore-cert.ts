import crypto, { type KeyObject } from 'node:crypto';
import { ASN1Obj } from '@sigstore/core';
import * as d from './der.js';

// The certificate side of the test sigstore PKI (sigstore-pki.ts): a Fulcio-like CA (root + intermediate) and the
// short-lived leaf it issues to a GitHub Actions workflow, with the extensions real Fulcio writes and an SCT from the
// local CT log embedded. All keys are ECDSA P-256, all certificate signatures ecdsa-with-SHA256.

/** A P-256 key pair; `spki` is the public key as SubjectPublicKeyInfo DER (what trusted roots and logIds hash). */
export interface Key {
  privateKey: KeyObject;
  spki: Buffer;
}

export function newKey(): Key {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, spki: publicKey.export({ type: 'spki', format: 'der' }) };
}

/** A log's id (Rekor logId, CT log id): SHA-256 of its key's SPKI DER. */
export const logIdOf = (key: Key): Buffer => crypto.createHash('sha256').update(key.spki).digest();

/** The signer identity a GitHub Actions OIDC token gives Fulcio. */
export interface Identity {
  /** https://github.com/owner/repo */
  repository: string;
  /** .github/workflows/release.yml */
  workflow: string;
  /** refs/tags/v1.0.0 */
  ref: string;
  /** 40 hex */
  commit: string;
  /** Default https://token.actions.githubusercontent.com */
  issuer?: string;
  /** The job's workflow when it is a reusable one from elsewhere (https://github.com/o/r/.github/workflows/x.yml@ref):
   *  Fulcio then puts it in the SAN and the Build Signer URI, and the calling workflow in the Build Config URI. */
  signer?: string;
}

export const GITHUB_ISSUER = 'https://token.actions.githubusercontent.com';

/** The certificate SAN Fulcio gives a workflow: `${repository}/${workflow}@${ref}`. */
export const sanOf = (id: Identity): string => id.signer ?? `${id.repository}/${id.workflow}@${id.ref}`;

/** A CA certificate with what issuing under it needs. */
export interface Ca {
  der: Buffer;
  key: Key;
  name: Buffer;
  ski: Buffer;
  organization: string;
  commonName: string;
}

const ECDSA_SHA256 = d.seq(d.oid('1.2.840.10045.4.3.2'));
const CODE_SIGNING = d.seq(d.oid('1.3.6.1.5.5.7.3.3'));

function ext(oid: string, value: Buffer, critical = false): Buffer {
  return critical ? d.seq(d.oid(oid), d.bool(true), d.octets(value)) : d.seq(d.oid(oid), d.octets(value));
}

/** Subject key identifier as Go's x509 computes it: SHA-1 of the subjectPublicKey bits (the EC point). */
const skiOf = (spki: Buffer): Buffer => crypto.createHash('sha1').update(spki.subarray(spki.length - 65)).digest();

/** 20 random bytes, positive and without a leading zero octet (Fulcio's serial numbers are 20 bytes too). */
function serial(): Buffer {
  const b = crypto.randomBytes(20);
  b[0] = ((b[0] ?? 0) & 0x7f) | 0x40;
  return b;
}

interface TbsFields {
  issuer: Buffer;
  notBefore: Date;
  notAfter: Date;
  subject: Buffer;
  spki: Buffer;
  extensions: Buffer[];
}

function tbsOf(f: TbsFields, serialNumber: Buffer): Buffer {
  return d.seq(
    d.ctx(0, d.int(2)), // v3
    d.uint(serialNumber),
    ECDSA_SHA256,
    f.issuer,
    d.seq(d.time(f.notBefore), d.time(f.notAfter)),
    f.subject,
    f.spki,
    d.ctx(3, d.seq(...f.extensions)),
  );
}

/**
 * What @sigstore/core signs and checks for a DER structure: it parses, then RE-ENCODES (X509Certificate.verify and
 * the SCT check both hash `tbsCertificate.toDER()`, not the original bytes), and it also parses the content of
 * every OCTET STRING as DER when it can. Our encoder is canonical, so the round trip must give the same bytes; if
 * not (say, a UTF-8 identity whose raw legacy extension happens to parse as non-minimal DER), signatures made over
 * the original would fail in sigstore-js only, so refuse loudly instead.
 */
function sigstoreCanonical(der: Buffer, what: string): Buffer {
  const again = ASN1Obj.parseBuffer(Buffer.from(der)).toDER();
  if (!der.equals(again)) throw new Error(`test PKI: @sigstore/core re-encodes the ${what} differently; change the identity`);
  return der;
}

function signed(tbs: Buffer, issuerKey: Key): Buffer {
  const sig = crypto.sign('sha256', sigstoreCanonical(tbs, 'TBS certificate'), issuerKey.privateKey);
  return d.seq(tbs, ECDSA_SHA256, d.bits(sig));
}

/** A CA certificate: self-signed root when `issuer` is absent, else an intermediate (code-signing EKU, as Fulcio's). */
export function caCert(o: { organization: string; commonName: string; issuer?: Ca; notBefore: Date; notAfter: Date; pathLen: number }): Ca {
  const key = newKey();
  const name = d.name(o.organization, o.commonName);
  const ski = skiOf(key.spki);
  const extensions = [
    ext('2.5.29.15', d.tlv(0x03, Buffer.from([0x01, 0x06])), true), // keyUsage: keyCertSign, cRLSign
    ...(o.issuer ? [ext('2.5.29.37', CODE_SIGNING)] : []),
    ext('2.5.29.19', d.seq(d.bool(true), d.int(o.pathLen)), true), // basicConstraints: CA, pathLen
    ext('2.5.29.14', d.octets(ski)),
    ext('2.5.29.35', d.seq(d.ctx(0, o.issuer?.ski ?? ski, false))),
  ];
  const tbs = tbsOf({ issuer: o.issuer?.name ?? name, notBefore: o.notBefore, notAfter: o.notAfter, subject: name, spki: key.spki, extensions }, serial());
  return { der: signed(tbs, o.issuer?.key ?? key), key, name, ski, organization: o.organization, commonName: o.commonName };
}

/** Deterministic numeric ids (repository_id, repository_owner_id) so the same repository keeps its ids. */
export function numericId(s: string): string {
  return String(100_000_000 + (crypto.createHash('sha256').update(s).digest().readUInt32BE(0) % 900_000_000));
}

/** The Fulcio extensions of a GitHub Actions certificate, in the real order: legacy ones raw, v2 ones UTF8String. */
function fulcioExtensions(id: Identity, runId: string): Buffer[] {
  const san = sanOf(id);
  const issuer = id.issuer ?? GITHUB_ISSUER;
  const ownerRepo = new URL(id.repository).pathname.replace(/^\//, '');
  const ownerUrl = id.repository.slice(0, id.repository.lastIndexOf('/'));
  const workflowName = id.workflow.replace(/^.*\//, '').replace(/\.ya?ml$/, '');
  const raw = (n: number, v: string): Buffer => ext(`1.3.6.1.4.1.57264.1.${n}`, Buffer.from(v, 'utf8'));
  const str = (n: number, v: string): Buffer => ext(`1.3.6.1.4.1.57264.1.${n}`, d.utf8(v));
  return [
    raw(1, issuer), // Issuer (deprecated, raw)
    raw(2, 'push'), // GitHub Workflow Trigger
    raw(3, id.commit), // GitHub Workflow SHA
    raw(4, workflowName), // GitHub Workflow Name
    raw(5, ownerRepo), // GitHub Workflow Repository
    raw(6, id.ref), // GitHub Workflow Ref
    str(8, issuer), // Issuer (V2)
    str(9, san), // Build Signer URI
    str(10, id.commit), // Build Signer Digest
    str(11, 'github-hosted'), // Runner Environment
    str(12, id.repository), // Source Repository URI
    str(13, id.commit), // Source Repository Digest
    str(14, id.ref), // Source Repository Ref
    str(15, numericId(id.repository)), // Source Repository Identifier
    str(16, ownerUrl), // Source Repository Owner URI
    str(17, numericId(ownerUrl)), // Source Repository Owner Identifier
    str(18, `${id.repository}/${id.workflow}@${id.ref}`), // Build Config URI (the calling workflow)
    str(19, id.commit), // Build Config Digest
    str(20, 'push'), // Build Trigger
    str(21, `${id.repository}/actions/runs/${runId}/attempts/1`), // Run Invocation URI
    str(22, 'public'), // Source Repository Visibility At Signing
  ];
}

/**
 * One RFC 6962 SCT (TLS encoding) from the CT log over a precertificate entry: SHA-256 of the issuer's SPKI, then
 * the leaf's TBS without the SCT extension (24-bit length prefixed) — what @sigstore/verify's key/sct.js rebuilds.
 */
function sct(ctlog: Key, issuerSpki: Buffer, precertTbs: Buffer, when: Date): Buffer {
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64BE(BigInt(when.getTime()));
  const len24 = Buffer.alloc(3);
  len24.writeUIntBE(precertTbs.length, 0, 3);
  const issuerKeyHash = crypto.createHash('sha256').update(issuerSpki).digest();
  // version v1, signature_type certificate_timestamp, timestamp, entry_type precert_entry, entry, no extensions
  const signedData = Buffer.concat([Buffer.from([0, 0]), timestamp, Buffer.from([0, 1]), issuerKeyHash, len24, precertTbs, Buffer.from([0, 0])]);
  const sig = crypto.sign('sha256', signedData, ctlog.privateKey);
  const sigLen = Buffer.alloc(2);
  sigLen.writeUInt16BE(sig.length);
  // version, log id, timestamp, extensions<0>, hash sha256(4), signature ecdsa(3), signature<…>
  return Buffer.concat([Buffer.from([0]), logIdOf(ctlog), timestamp, Buffer.from([0, 0, 4, 3]), sigLen, sig]);
}

/** The TLS list of SCTs (uint16 total length, each uint16-length prefixed), as the SCT extension carries it. */
function sctList(scts: Buffer[]): Buffer {
  const items = scts.map((s) => Buffer.concat([Buffer.from([s.length >> 8, s.length & 0xff]), s]));
  const body = Buffer.concat(items);
  return Buffer.concat([Buffer.from([body.length >> 8, body.length & 0xff]), body]);
}

/**
 * The leaf Fulcio issues for `identity` to the ephemeral key `spki`, valid 10 minutes from `issuedAt` (whole
 * seconds), with an embedded SCT timestamped `issuedAt`. Built twice over the same fields and serial: first without
 * the SCT extension (the precertificate TBS the SCT signs), then with it appended last, as Fulcio's are.
 */
export function fulcioLeaf(o: { ca: Ca; ctlog: Key; spki: Buffer; identity: Identity; runId: string; issuedAt: Date }): Buffer {
  const notBefore = new Date(Math.floor(o.issuedAt.getTime() / 1000) * 1000);
  const fields: TbsFields = {
    issuer: o.ca.name,
    notBefore,
    notAfter: new Date(notBefore.getTime() + 10 * 60_000),
    subject: d.seq(), // Fulcio leaves have an empty subject; the identity is in the SAN
    spki: o.spki,
    extensions: [
      ext('2.5.29.15', d.tlv(0x03, Buffer.from([0x07, 0x80])), true), // keyUsage: digitalSignature
      ext('2.5.29.37', CODE_SIGNING),
      ext('2.5.29.14', d.octets(skiOf(o.spki))),
      ext('2.5.29.35', d.seq(d.ctx(0, o.ca.ski, false))),
      ext('2.5.29.17', d.seq(d.tlv(0x86, Buffer.from(sanOf(o.identity), 'utf8'))), true), // SAN: one URI
      ...fulcioExtensions(o.identity, o.runId),
    ],
  };
  const serialNumber = serial();
  const precertTbs = sigstoreCanonical(tbsOf(fields, serialNumber), 'precertificate TBS');
  const scts = sctList([sct(o.ctlog, o.ca.key.spki, precertTbs, o.issuedAt)]);
  const withSct = { ...fields, extensions: [...fields.extensions, ext('1.3.6.1.4.1.11129.2.4.2', d.octets(scts))] };
  return sigstoreCanonical(signed(tbsOf(withSct, serialNumber), o.ca.key), 'leaf certificate');
}

/** PEM as Go's encoding/pem writes it (64-column base64), without the trailing newline, as Rekor bodies carry it. */
export function pem(label: 'CERTIFICATE' | 'PUBLIC KEY', der: Buffer, wrap = true): string {
  const b64 = der.toString('base64');
  const body = wrap ? (b64.match(/.{1,64}/g) ?? []).join('\n') : b64;
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`;
}
