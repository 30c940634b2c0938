import crypto from 'node:crypto';
import { json } from '@sigstore/core';
import { type Key, logIdOf, newKey } from './sigstore-cert.js';

// The transparency-log side of the test sigstore PKI (sigstore-pki.ts): a local Rekor (v1 API shapes) that logs
// DSSE envelopes as `intoto` 0.0.2 entries — the kind and version the real npm bundles carry — and answers with
// what a bundle's tlogEntries[] holds: the canonicalized body, a signed entry timestamp (inclusion promise) and an
// RFC 6962 inclusion proof with a signed checkpoint. @sigstore/verify checks all three.

/** One tlogEntries[] item of a bundle, JSON form. */
export interface TlogEntryJson {
  logIndex: string;
  logId: { keyId: string };
  kindVersion: { kind: string; version: string };
  integratedTime: string;
  inclusionPromise: { signedEntryTimestamp: string };
  inclusionProof: { logIndex: string; rootHash: string; treeSize: string; hashes: string[]; checkpoint: { envelope: string } };
  canonicalizedBody: string;
}

/** A DSSE envelope as signed, before JSON encoding. */
export interface Envelope {
  payloadType: string;
  payload: Buffer;
  sig: Buffer;
  /** "" when the signer has no key id (Fulcio certificates), the key id otherwise (npm's registry key). */
  keyid: string;
}

const sha256 = (...parts: Buffer[]): Buffer => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const leafHash = (leaf: Buffer): Buffer => sha256(Buffer.from([0]), leaf);
const nodeHash = (l: Buffer, r: Buffer): Buffer => sha256(Buffer.from([1]), l, r);
const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64');

/** Largest power of two strictly below n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** RFC 6962 Merkle tree hash of leaf hashes. */
function treeHash(leaves: Buffer[]): Buffer {
  if (leaves.length === 1) return leaves[0] as Buffer;
  const k = split(leaves.length);
  return nodeHash(treeHash(leaves.slice(0, k)), treeHash(leaves.slice(k)));
}

/** RFC 6962 audit path for leaf m, lowest level first (the order @sigstore/verify's merkle.js chains). */
function auditPath(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k
    ? [...auditPath(m, leaves.slice(0, k)), treeHash(leaves.slice(k))]
    : [...auditPath(m - k, leaves.slice(k)), treeHash(leaves.slice(0, k))];
}

/**
 * The Rekor `intoto` 0.0.2 body for an envelope: signature and verifier (PEM) double base64-encoded, payload
 * left out, payloadHash = SHA-256 of the payload, and `hash` computed as sigstore-js does for what it submits
 * (canonical JSON of {payloadType, payload b64, signatures: [{sig b64, publicKey PEM, keyid if any}]}), which is
 * what the real npm bundles carry. @sigstore/verify checks only the signature, the payload hash and the count.
 */
export function intotoBody(env: Envelope, verifierPem: string): Buffer {
  const sig: Record<string, string> = { sig: b64(env.sig), publicKey: verifierPem };
  if (env.keyid) sig.keyid = env.keyid;
  const envelopeHash = sha256(Buffer.from(json.canonicalize({ payloadType: env.payloadType, payload: b64(env.payload), signatures: [sig] })));
  const entrySig: Record<string, string> = { publicKey: b64(verifierPem), sig: b64(b64(env.sig)) };
  if (env.keyid) entrySig.keyid = env.keyid;
  const body = {
    apiVersion: '0.0.2',
    kind: 'intoto',
    spec: {
      content: {
        envelope: { payloadType: env.payloadType, signatures: [entrySig] },
        hash: { algorithm: 'sha256', value: envelopeHash.toString('hex') },
        payloadHash: { algorithm: 'sha256', value: sha256(env.payload).toString('hex') },
      },
    },
  };
  return Buffer.from(json.canonicalize(body), 'utf8');
}

/** A local Rekor: one key, an append-only list of leaves, entries answered with promise + proof. */
export class LocalRekor {
  readonly key: Key = newKey();
  readonly logId: Buffer = logIdOf(this.key);
  /** The checkpoint origin line, "<host> - <tree id>" like the real log's. */
  readonly origin: string;
  private readonly leaves: Buffer[];

  constructor(readonly baseUrl: string) {
    this.origin = `${new URL(baseUrl).host} - ${crypto.randomInt(2 ** 47)}`;
    // A few earlier entries from other users, so every inclusion proof has a path to check.
    this.leaves = Array.from({ length: 5 }, () => leafHash(crypto.randomBytes(32)));
  }

  /** Logs `env` (verified by `verifierPem`, a certificate or public key) at `integratedTime` (Unix seconds). */
  logIntoto(env: Envelope, verifierPem: string, integratedTime: number): TlogEntryJson {
    return this.append(intotoBody(env, verifierPem), { kind: 'intoto', version: '0.0.2' }, integratedTime);
  }

  /** Logs a message signature (over a blob whose sha256 is `digest`) as a `hashedrekord` 0.0.1 entry. */
  logHashedRekord(sig: Buffer, digest: Buffer, verifierPem: string, integratedTime: number): TlogEntryJson {
    const body = { apiVersion: '0.0.1', kind: 'hashedrekord', spec: { data: { hash: { algorithm: 'sha256', value: digest.toString('hex') } }, signature: { content: b64(sig), publicKey: { content: b64(verifierPem) } } } };
    return this.append(Buffer.from(json.canonicalize(body), 'utf8'), { kind: 'hashedrekord', version: '0.0.1' }, integratedTime);
  }

  private append(body: Buffer, kindVersion: { kind: string; version: string }, integratedTime: number): TlogEntryJson {
    const logIndex = this.leaves.length;
    this.leaves.push(leafHash(body));
    const treeSize = this.leaves.length;
    const rootHash = treeHash(this.leaves);
    // Signed entry timestamp: the log's signature over canonical {body, integratedTime, logID (hex), logIndex}.
    const set = crypto.sign('sha256', Buffer.from(json.canonicalize({ body: b64(body), integratedTime, logID: this.logId.toString('hex'), logIndex }), 'utf8'), this.key.privateKey);
    return {
      logIndex: String(logIndex),
      logId: { keyId: b64(this.logId) },
      kindVersion,
      integratedTime: String(integratedTime),
      inclusionPromise: { signedEntryTimestamp: b64(set) },
      inclusionProof: {
        logIndex: String(logIndex),
        rootHash: b64(rootHash),
        treeSize: String(treeSize),
        hashes: auditPath(logIndex, this.leaves).map(b64),
        checkpoint: { envelope: this.checkpoint(treeSize, rootHash) },
      },
      canonicalizedBody: b64(body),
    };
  }

  /** A signed note (transparency-dev checkpoint): "— <host> base64(key hint ‖ signature)" under the note. */
  private checkpoint(treeSize: number, rootHash: Buffer): string {
    const note = `${this.origin}\n${treeSize}\n${b64(rootHash)}\n`;
    const sig = crypto.sign('sha256', Buffer.from(note, 'utf8'), this.key.privateKey);
    return `${note}\n\u2014 ${new URL(this.baseUrl).host} ${b64(Buffer.concat([this.logId.subarray(0, 4), sig]))}\n`;
  }
}
