import type { X509Certificate } from '@sigstore/core';
import { WardenError } from '../error.js';
import { escaped } from '../escape.js';

// Who built a package: what the Fulcio certificate of its provenance says about the CI run that signed it.
// Fulcio writes these from the CI provider's OIDC token (docs/threat-model.md says what that proves). The
// identity pinned for a server is issuer + source repository + workflow; ref and commit change every release.
// Values are compared exactly: no regular expression is handed to sigstore-js, whose SAN policy is unanchored.

/** Fulcio's certificate extensions (github.com/sigstore/fulcio docs/oid-info.md). */
const OID = {
  issuerV1: '1.3.6.1.4.1.57264.1.1',
  shaV1: '1.3.6.1.4.1.57264.1.3',
  repositoryV1: '1.3.6.1.4.1.57264.1.5',
  refV1: '1.3.6.1.4.1.57264.1.6',
  issuer: '1.3.6.1.4.1.57264.1.8',
  sourceRepository: '1.3.6.1.4.1.57264.1.12',
  sourceDigest: '1.3.6.1.4.1.57264.1.13',
  sourceRef: '1.3.6.1.4.1.57264.1.14',
  buildConfigUri: '1.3.6.1.4.1.57264.1.18',
  runInvocation: '1.3.6.1.4.1.57264.1.21',
};

const GITHUB_ISSUER = 'https://token.actions.githubusercontent.com';

/** What the warden pins for a server: a later version must have been built by the same. */
export interface PinnedIdentity {
  issuer: string;
  /** The source repository URI (https://github.com/owner/repo). */
  repository: string;
  /** The build configuration: a path in the repository (.github/workflows/release.yml), or a full URI when the
   *  workflow lives in another repository (a reusable workflow). */
  workflow: string;
}

export interface PublisherIdentity extends PinnedIdentity {
  /** The certificate's subject alternative name, in full. */
  san: string;
  ref?: string;
  commit?: string;
  /** The CI run that signed (a URL), when the certificate names one. */
  run?: string;
  /** The top-level workflow of the build (Build Config URI), when the certificate names it: the caller, when the
   *  SAN names a reusable workflow of another repository. */
  config?: string;
}

/** Reads a DER UTF8String (Fulcio's v2 extensions); undefined for anything else. */
function derUtf8(value: Buffer): string | undefined {
  if (value.length < 2 || value[0] !== 0x0c) return undefined;
  let len = value[1] as number;
  let at = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || value.length < 2 + n) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (value[2 + i] as number);
    at = 2 + n;
  }
  return at + len === value.length ? value.subarray(at).toString('utf8') : undefined;
}

function ext(cert: X509Certificate, oid: string, der: boolean): string | undefined {
  const e = cert.extension(oid);
  if (!e) return undefined;
  return der ? derUtf8(e.value) : e.value.toString('utf8');
}

/** The identity a verified provenance certificate carries, or a refusal when it names no source. */
export function identityOf(cert: X509Certificate, san: string | undefined, issuer: string | undefined, label: string): PublisherIdentity {
  const iss = issuer ?? ext(cert, OID.issuer, true) ?? ext(cert, OID.issuerV1, false);
  let repository = ext(cert, OID.sourceRepository, true);
  if (!repository && iss === GITHUB_ISSUER) {
    const legacy = ext(cert, OID.repositoryV1, false);
    if (legacy) repository = `https://github.com/${legacy}`;
  }
  if (!san || !iss || !repository) {
    throw new WardenError('PROVENANCE_INVALID', `the provenance of ${label} was signed by a certificate that does not name its ${!san ? 'signer (no subject alternative name)' : !iss ? 'OIDC issuer' : 'source repository'}; the warden cannot tell who built it and will not trust it.`);
  }
  const at = san.lastIndexOf('@');
  const config = at > 0 ? san.slice(0, at) : san;
  const workflow = config.startsWith(`${repository}/`) ? config.slice(repository.length).replace(/^\/+/, '') : config;
  const ref = ext(cert, OID.sourceRef, true) ?? ext(cert, OID.refV1, false);
  const commit = ext(cert, OID.sourceDigest, true) ?? ext(cert, OID.shaV1, false);
  const run = ext(cert, OID.runInvocation, true);
  const buildConfig = ext(cert, OID.buildConfigUri, true);
  return { issuer: iss, repository, workflow, san, ...(ref ? { ref } : {}), ...(commit ? { commit } : {}), ...(run ? { run } : {}), ...(buildConfig ? { config: buildConfig } : {}) };
}

export function pinnedOf(id: PinnedIdentity): PinnedIdentity {
  return { issuer: id.issuer, repository: id.repository, workflow: id.workflow };
}

export function samePublisher(a: PinnedIdentity, b: PinnedIdentity): boolean {
  return a.issuer === b.issuer && a.repository === b.repository && a.workflow === b.workflow;
}

/** One line naming a publisher, for messages: "owner/repo (workflow) via issuer". */
export function describePublisher(id: PinnedIdentity): string {
  return `${escaped(id.repository)} ${escaped(id.workflow)}${id.issuer === GITHUB_ISSUER ? '' : ` (issuer ${escaped(id.issuer)})`}`;
}

/**
 * Whether a verified identity matches `install --identity PATTERN`: the signer's subject alternative name must match
 * it, and when that names a workflow outside the source repository (a reusable workflow, which anyone may call), so
 * must the build's own top-level workflow (Build Config URI): else a package built in any repository by calling a
 * reusable workflow of the pattern's owner would match.
 */
export function matchesIdentity(pattern: string, id: PublisherIdentity): boolean {
  if (!matchesIdentityPattern(pattern, id.san)) return false;
  if (id.san.startsWith(`${id.repository}/`)) return true;
  return id.config !== undefined && id.config.startsWith(`${id.repository}/`) && matchesIdentityPattern(pattern, id.config);
}

/**
 * `install --identity PATTERN`: the signer's subject alternative name must match PATTERN in full, where `*`
 * stands for any run of characters (and nothing else is special).
 */
export function matchesIdentityPattern(pattern: string, san: string): boolean {
  const source = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`, 's').test(san);
}
