import { WardenError } from '../error.js';
import { describePublisher, pinnedOf, samePublisher, type PinnedIdentity, type PublisherIdentity } from './identity.js';

// The provenance policy of an installed server (servers.json `provenance`, `identity`), applied to a version
// it is about to move to:
//   required   the new version must carry verified provenance from the pinned publisher (issuer, source
//              repository, workflow). A version without provenance is a trust downgrade; another publisher
//              is a changed publisher. Both refused unless the operator overrides, which is audited.
//   preferred  the server was admitted unsigned. A version with provenance pins its publisher from then on
//              (the policy becomes required); one without stays preferred.
//   off        provenance is not asked for (a version that has one is still verified and shown).

export type ProvenancePolicy = 'required' | 'preferred' | 'off';

export interface UpgradeJudgement {
  policy: ProvenancePolicy;
  identity?: PinnedIdentity;
  /** Set when the operator's override admitted what the policy refuses (an audit event names both). */
  override?: 'publisher_changed' | 'provenance_lost';
  /** The new version has no provenance and the policy let it in without one (preferred or off). */
  unsigned: boolean;
}

export interface Overrides {
  allowPublisherChange: boolean;
  allowUnsigned: boolean;
}

export function judgeUpgrade(label: string, policy: ProvenancePolicy, pinned: PinnedIdentity | undefined, presented: PublisherIdentity | undefined, overrides: Overrides): UpgradeJudgement {
  if (policy === 'required') {
    if (!pinned) throw new WardenError('FILE_INVALID', `the server installing ${label} has provenance "required" but no pinned identity in servers.json; add its "identity" or set "provenance" to "preferred".`);
    if (!presented) {
      if (!overrides.allowUnsigned) {
        throw new WardenError('PROVENANCE_MISSING', `${label} has no provenance, but the versions before it were built by ${describePublisher(pinned)}: a trust downgrade. Nothing was changed. If you know why provenance was dropped, override with --allow-unsigned (audited).`);
      }
      return { policy: 'preferred', override: 'provenance_lost', unsigned: true };
    }
    if (!samePublisher(pinned, presented)) {
      if (!overrides.allowPublisherChange) {
        throw new WardenError(
          'PUBLISHER_CHANGED',
          `${label} was built by ${describePublisher(presented)}, not by the pinned ${describePublisher(pinned)}. Nothing was changed. If the project really moved its repository or release workflow, override with --allow-publisher-change (audited, and the new publisher is pinned).`,
        );
      }
      return { policy: 'required', identity: pinnedOf(presented), override: 'publisher_changed', unsigned: false };
    }
    return { policy: 'required', identity: pinned, unsigned: false };
  }
  if (policy === 'preferred') {
    return presented ? { policy: 'required', identity: pinnedOf(presented), unsigned: false } : { policy: 'preferred', unsigned: true };
  }
  return { policy: 'off', ...(pinned ? { identity: pinned } : {}), unsigned: presented === undefined };
}
