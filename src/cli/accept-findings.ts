import { WardenError } from '../error.js';
import { FINDING_CODES, isFindingCode, type FindingCode } from '../scan/rules.js';

/** The codes of `--accept-findings A,B`; an unknown code is a usage error (a typo must not accept nothing). */
export function acceptedFindings(list: string | undefined): FindingCode[] {
  if (list === undefined) return [];
  const codes = list.split(',').map((c) => c.trim()).filter(Boolean);
  const unknown = codes.filter((c) => !isFindingCode(c));
  if (unknown.length > 0 || codes.length === 0) {
    throw new WardenError('USAGE', `--accept-findings takes finding codes separated by commas; ${unknown.length ? `unknown: ${unknown.map((c) => JSON.stringify(c.slice(0, 40))).join(', ')}` : 'none was given'}. The codes: ${FINDING_CODES.join(', ')}.`);
  }
  return codes as FindingCode[];
}
