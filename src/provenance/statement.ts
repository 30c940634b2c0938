import type { Bundle } from '@sigstore/bundle';
import { WardenError } from '../error.js';

// The in-toto statement inside an attestation's DSSE envelope: what the signature is about. A signature that
// verifies proves nothing about this tarball unless the statement names it: the package URL of this name and
// version, and the sha512 of these very bytes. Read after the signature verified (the payload is signed).

export interface Subject {
  name: string;
  version: string;
  /** The sha512 of the tarball, lowercase hex. */
  sha512hex: string;
}

const STATEMENT_TYPES = ['https://in-toto.io/Statement/v1', 'https://in-toto.io/Statement/v0.1'];
const IN_TOTO_PAYLOAD = 'application/vnd.in-toto+json';

/** The package URL npm writes in its statements: `pkg:npm/<name>@<version>`, a scope's `@` as `%40`. */
export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, '%40')}@${version}`;
}

interface Statement {
  _type?: unknown;
  predicateType?: unknown;
  subject?: unknown;
}

export function checkSubject(bundle: Bundle, predicateType: string, subject: Subject, label: string, what: string): void {
  const content = bundle.content;
  if (content.$case !== 'dsseEnvelope' || content.dsseEnvelope.payloadType !== IN_TOTO_PAYLOAD) {
    throw new WardenError('PROVENANCE_INVALID', `the ${what} of ${label} is not an in-toto statement in a DSSE envelope; nothing was installed.`);
  }
  let statement: Statement;
  try {
    statement = JSON.parse(Buffer.from(content.dsseEnvelope.payload).toString('utf8')) as Statement;
  } catch {
    throw new WardenError('PROVENANCE_INVALID', `the ${what} of ${label} holds a statement that is not JSON; nothing was installed.`);
  }
  if (!STATEMENT_TYPES.includes(statement._type as string) || statement.predicateType !== predicateType) {
    throw new WardenError('PROVENANCE_INVALID', `the ${what} of ${label} is a statement of type ${String(statement._type)} about ${String(statement.predicateType)}, not the ${predicateType} the registry labelled it; nothing was installed.`);
  }
  const subjects = Array.isArray(statement.subject) ? (statement.subject as { name?: unknown; digest?: { sha512?: unknown } }[]) : [];
  const purl = npmPurl(subject.name, subject.version);
  if (subjects.length !== 1) {
    throw new WardenError('PROVENANCE_SUBJECT_MISMATCH', `the ${what} of ${label} names ${subjects.length} subjects, not the one package it should; nothing was installed.`);
  }
  const only = subjects[0] as { name?: unknown; digest?: { sha512?: unknown } };
  if (only.name !== purl) {
    throw new WardenError('PROVENANCE_SUBJECT_MISMATCH', `the ${what} presented for ${label} is about ${String(only.name)}, not ${purl}: an attestation of another package cannot vouch for this one. Nothing was installed.`);
  }
  const digest = typeof only.digest?.sha512 === 'string' ? only.digest.sha512.toLowerCase() : undefined;
  if (digest !== subject.sha512hex) {
    throw new WardenError(
      'PROVENANCE_SUBJECT_MISMATCH',
      `the tarball of ${label} is not the one its ${what} was made for (sha512 ${subject.sha512hex.slice(0, 16)}… here, ${digest ? `${digest.slice(0, 16)}…` : 'none'} attested): the bytes were swapped after the build. Nothing was installed; do not use this registry or mirror for it until that is explained.`,
    );
  }
}
