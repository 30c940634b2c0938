import fs from 'node:fs';
import type { AuditEvent } from '../audit/events.js';
import { escaped } from '../escape.js';
import { createSessionCgroup, removeCgroup, type Cgroup } from '../launch/cgroup.js';
import type { DecoyRead } from './decoys.js';
import type { EgressDenial } from './egress-proxy.js';
import type { GuardDenial, GuardRead } from '../launch/guard-denials.js';
import type { Engine } from './engine.js';
import { startWriteTrace, TRACING_OFF, writesUnobservable, type DeniedWrite, type WriteTrace } from './write-trace.js';

// A confined session's denied writes, observed from before its server runs (docs/adr/0066): the tracer is started
// on the session's cgroup and the caller spawns the server only once this resolved. Whatever goes wrong here is
// reported (an audit event, an alert, a line) and the session goes on: observation, never confinement.

export interface WritesObserved {
  /** The running tracer, when writes are observed. */
  trace?: WriteTrace;
  writes: 'observed' | 'unobserved' | 'off';
  /** Why not (launch event's `writesWhy`). */
  why?: string;
}

/** Starts the tracer of server `id`'s session in the cgroup `cgroupDir` (none: not observed), reporting each
 *  denied write to `denied`, at most `max` of them, and a tracer that could not start or stopped to the audit log
 *  (and to `died`: the launch event, when not recorded yet, says so too). */
export async function observeWrites(o: { id: string; tracer: Engine | undefined; off?: true; cgroupDir: string | undefined; max: number; denied: (d: DeniedWrite) => void; record: (e: AuditEvent) => unknown; say: (m: string) => void; died: (why: string) => void }): Promise<WritesObserved> {
  // A host that cannot trace (not root, no bpftrace, no tracefs) is the same for every session: the launch event
  // and `mcp-warden doctor` say so, without an alert a session. So does an operator's "off".
  if (o.off) return { writes: 'off', why: TRACING_OFF };
  const host = writesUnobservable(o.tracer);
  if (host !== undefined || !o.tracer) return { writes: 'unobserved', why: host ?? 'bpftrace is not on the trusted path' };
  const notObserved = (when: 'start' | 'session', why: string): void => {
    void o.record({ event: 'sandbox_writes_unobserved', server: o.id, when, why });
    o.say(`server '${o.id}': the writes its sandbox refuses are not observed in this session (${escaped(why)}); it runs confined as before. Check with: mcp-warden doctor`);
  };
  let why: string;
  if (!o.cgroupDir) why = 'the session has no cgroup of its own to trace (no writable cgroup2 hierarchy)';
  else {
    try {
      const cgroupId = fs.statSync(o.cgroupDir, { bigint: true }).ino; // a cgroup2 directory's inode is its id
      const trace = await startWriteTrace(o.tracer, cgroupId, o.denied, o.max);
      void trace.died.then((w) => {
        o.died(w);
        notObserved('session', w);
      });
      return { trace, writes: 'observed' };
    } catch (err) {
      why = (err as Error).message.slice(0, 512);
    }
  }
  notObserved('start', why);
  return { writes: 'unobserved', why };
}

/** A confined launch's cgroup, denial recorder and tracer, started as soon as the sandbox is known, so that the
 *  tracer compiles and attaches while the server's files are digested (spawnPrepared awaits it). */
export interface EarlyObservation {
  cgroup: Cgroup | undefined;
  denied: (d: EgressDenial | DecoyRead | DeniedWrite | GuardDenial | GuardRead) => void;
  /** The reports a session records (the cap) and one more, which records that the cap was reached. */
  max: number;
  observing: Promise<WritesObserved>;
  /** Why the tracer stopped, once it did. */
  diedWhy?: string;
  /** A launch refused before the spawn: the tracer stopped, the cgroup removed. */
  discard(): Promise<void>;
}

export async function observeEarly(o: { id: string; tracer: Engine | undefined; off?: true; record: (e: AuditEvent) => unknown; say: (m: string) => void }): Promise<EarlyObservation> {
  const { recordDenials, DENIALS_RECORDED } = await import('./egress.js');
  const cgroup = createSessionCgroup();
  const denied = recordDenials(o.id, o.record, o.say);
  const early: EarlyObservation = {
    cgroup,
    denied,
    max: DENIALS_RECORDED + 1,
    observing: observeWrites({ ...o, cgroupDir: cgroup?.dir, max: DENIALS_RECORDED + 1, denied, died: (why) => (early.diedWhy = why) }),
    async discard() {
      await (await early.observing).trace?.close();
      if (cgroup) await removeCgroup(cgroup);
    },
  };
  return early;
}
