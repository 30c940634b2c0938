import type { AuditEvent } from '../audit/events.js';
import type { Baseline, LatencyPolicy } from '../canary/baseline.js';
import type { ProbeSpec } from '../canary/probe.js';
import { DEFAULT_CAPS, type SurfaceCaps } from '../surface/admit.js';
import type { LockEntry } from '../surface/lockfile.js';
import type { Posture } from '../surface/posture.js';
import { DEFAULT_CHANNEL_LIMITS, type ChannelLimits } from './channel.js';
import type { JudgeConfig } from './judge.js';
import type { SessionRules } from '../rules/gate.js';
import type { Said } from './refusal-text.js';

// What an in-band session is given, how it ends, and what it counts.

export interface SessionConfig {
  serverId: string;
  posture: Posture;
  entry: LockEntry | undefined;
  extra: JudgeConfig['extra'];
  caps: SurfaceCaps;
  channel: ChannelLimits;
  relistAfterCalls: number;
  relistAfterMs: number;
  audit: (e: AuditEvent) => void;
  report: (message: string) => void;
  /** Canaries run at session start, before the client is released (none without baselines). */
  canaries?: { probes: ProbeSpec[]; baselines: Record<string, Baseline>; policy: LatencyPolicy; samples: number };
  /** Told the client's clientInfo from its initialize (out-of-band sessions present it later). */
  clientSeen?: (clientInfo: unknown) => void;
  /** Throws when the server process no longer runs the program that was verified (run before each line). */
  verifyWriter?: () => void;
  /**
   * Started once, when the server writes its first line (a node server has loaded its code by then), and awaited
   * before anything from the server reaches the client; a rejection closes the session as soon as it happens.
   */
  atFirstLine?: () => Promise<void>;
  /** The operator's rules for this server (none: the lock alone decides, as before rules existed). */
  rules?: SessionRules;
}

export const SESSION_DEFAULTS = { caps: DEFAULT_CAPS, channel: DEFAULT_CHANNEL_LIMITS };

export type SessionEnd =
  | { cause: 'client_eof' }
  | { cause: 'server_eof' }
  | { cause: 'protocol_error' | 'verification_failed' | 'surface_refused' | 'inadmissible'; message: string };

export interface SessionStats {
  nonJsonLines: number;
  oversizeLines: number;
  refusedClientLines: number;
  refusedServerMessages: number;
  refusedCalls: number;
  refusedPages: number;
}

/** The session is refused on its surface or its canaries (exit 3), not failed: `message` for the operator,
 *  `said` what the client is told (proxy/refusal-text.ts). */
export class SurfaceRefusal extends Error {
  constructor(
    message: string,
    readonly said: Said,
  ) {
    super(message);
  }
}
