import { describe, expect, it } from 'vitest';
import { judgeUpgrade } from '../../dist/provenance/policy.js';
import { matchesIdentityPattern } from '../../dist/provenance/identity.js';

// The provenance policy of an installed server applied to the version an upgrade would move it to
// (src/provenance/policy.ts): who may build the next version, and what an override records.

const ISSUER = 'https://token.actions.githubusercontent.com';
const pinned = { issuer: ISSUER, repository: 'https://github.com/acme/tool', workflow: '.github/workflows/release.yml' };
const built = (over: Partial<typeof pinned> = {}) => ({ ...pinned, san: `${over.repository ?? pinned.repository}/${over.workflow ?? pinned.workflow}@refs/tags/v2.0.0`, ref: 'refs/tags/v2.0.0', ...over });
const none = { allowPublisherChange: false, allowUnsigned: false };

describe('upgrade policy', () => {
  it('admits the same publisher under "required" and keeps the pin', () => {
    expect(judgeUpgrade('tool@2.0.0', 'required', pinned, built(), none)).toEqual({ policy: 'required', identity: pinned, unsigned: false });
  });

  it('refuses another repository, another workflow or another issuer as PUBLISHER_CHANGED', () => {
    for (const other of [built({ repository: 'https://github.com/evil/tool' }), built({ workflow: '.github/workflows/other.yml' }), built({ issuer: 'https://gitlab.com' })]) {
      expect(() => judgeUpgrade('tool@2.0.0', 'required', pinned, other, none)).toThrow(expect.objectContaining({ code: 'PUBLISHER_CHANGED' }));
    }
  });

  it('refuses a version that lost its provenance as a trust downgrade (PROVENANCE_MISSING)', () => {
    expect(() => judgeUpgrade('tool@2.0.0', 'required', pinned, undefined, none)).toThrow(expect.objectContaining({ code: 'PROVENANCE_MISSING', message: expect.stringContaining('trust downgrade') }));
  });

  it('an override admits what the policy refuses, and says which override it was', () => {
    const other = built({ repository: 'https://github.com/acme/tool-ng' });
    expect(judgeUpgrade('tool@2.0.0', 'required', pinned, other, { ...none, allowPublisherChange: true })).toEqual({ policy: 'required', identity: { issuer: ISSUER, repository: 'https://github.com/acme/tool-ng', workflow: pinned.workflow }, override: 'publisher_changed', unsigned: false });
    expect(judgeUpgrade('tool@2.0.0', 'required', pinned, undefined, { ...none, allowUnsigned: true })).toEqual({ policy: 'preferred', override: 'provenance_lost', unsigned: true });
    // One override does not stand in for the other.
    expect(() => judgeUpgrade('tool@2.0.0', 'required', pinned, other, { ...none, allowUnsigned: true })).toThrow(expect.objectContaining({ code: 'PUBLISHER_CHANGED' }));
    expect(() => judgeUpgrade('tool@2.0.0', 'required', pinned, undefined, { ...none, allowPublisherChange: true })).toThrow(expect.objectContaining({ code: 'PROVENANCE_MISSING' }));
  });

  it('"preferred" pins the first publisher that shows up, and stays preferred while none does', () => {
    expect(judgeUpgrade('tool@2.0.0', 'preferred', undefined, built(), none)).toEqual({ policy: 'required', identity: pinned, unsigned: false });
    expect(judgeUpgrade('tool@2.0.0', 'preferred', undefined, undefined, none)).toEqual({ policy: 'preferred', unsigned: true });
  });

  it('"required" without a pinned identity is a configuration error, not a pass', () => {
    expect(() => judgeUpgrade('tool@2.0.0', 'required', undefined, built(), none)).toThrow(expect.objectContaining({ code: 'FILE_INVALID' }));
  });
});

describe('install --identity patterns', () => {
  const san = 'https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v2.0.0';
  it('match the whole identity, with * for any run of characters', () => {
    expect(matchesIdentityPattern('https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/*', san)).toBe(true);
    expect(matchesIdentityPattern('https://github.com/acme/*', san)).toBe(true);
  });
  it('are anchored at both ends and treat every other character literally', () => {
    expect(matchesIdentityPattern('github.com/acme/tool', san)).toBe(false); // a substring is not a match
    expect(matchesIdentityPattern('https://github.com/acme/tool/.github/workflows/release.yml', san)).toBe(false);
    expect(matchesIdentityPattern('https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v2.0.0', 'https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v2.0.0.evil')).toBe(false);
    expect(matchesIdentityPattern('https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v2.0.0', 'https://github.com/acme/tool/.github/workflows/releaseXyml@refs/tags/v2.0.0')).toBe(false); // "." is not "any"
    expect(matchesIdentityPattern('https://github.com/acme/(tool|evil)/*', 'https://github.com/acme/evil/x')).toBe(false);
  });
});
