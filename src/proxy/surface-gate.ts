import type { JsonValue } from '../protocol/json/reader.js';
import { admitHandshake, type Handshake } from '../surface/admit.js';
import type { CallRules } from './call-rules.js';
import type { ServerChannel } from './channel.js';
import { SurfaceJudge, type ListingSource } from './judge.js';
import { listAllTools, listCatalogs } from './listing.js';
import { provenTools } from './canary-run.js';
import { runSessionCanaries } from './session-canaries.js';
import { SurfaceRefusal, type SessionConfig } from './session-config.js';

// What a session knows of the server's surface, and keeping it verified: the judge made at the handshake, the
// listings (at the handshake, on list_changed, every N calls or T ms), the catalogs and canaries of the session's
// start, and the load re-check that must pass before the server's first byte reaches the client.

export class SurfaceGate {
  /** Set at the handshake: the session's authority on which tools the client may see and call. */
  judge: SurfaceJudge | undefined;
  private lastListStartSeq = -1;
  /** The same for the catalogs (prompts, resources, templates). */
  private lastCatalogsStartSeq = -1;
  private callsSinceList = 0;
  private lastListAt = Date.now();
  /** The check started at the server's first line (SessionConfig.atFirstLine). */
  private loadCheck: Promise<void> | undefined;
  private checked = false;
  /** The tools of the last complete listing proven equal to the lock (the only ones a canary may call). */
  private proven: ReadonlySet<string> = new Set();

  constructor(
    private readonly server: ServerChannel,
    private readonly cfg: SessionConfig,
    private readonly rules: CallRules | undefined,
    private readonly failFrom: (err: unknown) => void,
    /** The sequence number the next server message will get (a list_changed sent before a listing started is
     *  answered by that listing). */
    private readonly nextSeq: () => number,
  ) {}

  /** Judges the surface of an initialize result: sends the server `initialized`, lists every page, judges the
   *  catalogs and runs the session canaries, then awaits the load check. Throws a refusal. */
  async verifyHandshake(result: JsonValue | undefined, stopped: () => boolean): Promise<void> {
    const handshake = admitHandshake(result, this.cfg.caps);
    this.server.notify('notifications/initialized');
    await this.verify(handshake, stopped);
  }

  /** Builds the judge of a session without a handshake (revision 2026-07-28) from `handshake` (its judged
   *  server/discover, or the lock's): lists every page, judges the catalogs, runs the session canaries and awaits
   *  the load check, as verifyHandshake does. Throws a refusal. */
  async verify(handshake: Handshake, stopped: () => boolean): Promise<void> {
    const judge = new SurfaceJudge(this.cfg, handshake);
    this.judge = judge;
    await this.list('handshake');
    if (stopped()) return;
    // What the server advertises beyond tools is judged too; what it does not advertise is never admitted.
    this.lastCatalogsStartSeq = this.nextSeq();
    judge.judgeCatalogs(await listCatalogs(this.server, judge.handshake, this.cfg.caps));
    await runSessionCanaries(this.server, this.cfg, judge.listed, this.proven, this.rules?.gate);
    await this.beforeRelease();
  }

  /** Counts a client's call on a released session, and re-lists first when one is due. */
  async beforeCall(): Promise<void> {
    if (!this.judge) return;
    this.callsSinceList++;
    if (this.callsSinceList > this.cfg.relistAfterCalls || Date.now() - this.lastListAt > this.cfg.relistAfterMs) await this.relist('relist');
  }

  /** Whether a list_changed (the `seq`-th server message) needs a listing: none started since it was sent. */
  listChangedNeedsListing(seq: number): boolean {
    return this.judge !== undefined && seq >= this.lastListStartSeq;
  }

  /** Lists and judges again; a failure closes the session. */
  async relist(source: ListingSource): Promise<void> {
    try {
      await this.list(source);
    } catch (err) {
      this.failFrom(err);
    }
  }

  /** Lists and judges the catalogs again for a modern prompts or resources list change (the `seq`-th server
   *  message), unless a listing of them started after it was sent (that listing answers it, as for tools); a
   *  failure closes the session. */
  async relistCatalogs(seq: number): Promise<void> {
    const judge = this.judge;
    if (!judge || seq < this.lastCatalogsStartSeq) return;
    this.lastCatalogsStartSeq = this.nextSeq();
    try {
      judge.judgeCatalogs(await listCatalogs(this.server, judge.handshake, this.cfg.caps));
    } catch (err) {
      this.failFrom(err);
    }
  }

  /** Starts the load check once (at the server's first line; before the release at the latest); a failure closes
   *  the session at once, without waiting for the handshake to end. */
  startLoadCheck(): Promise<void> {
    if (!this.loadCheck) {
      const check = this.cfg.atFirstLine;
      let started: Promise<void>;
      try {
        started = check ? check() : Promise.resolve();
      } catch (err) {
        started = Promise.reject(err);
      }
      started.catch((err: unknown) => this.failFrom(err));
      this.loadCheck = started;
    }
    return this.loadCheck;
  }

  /** Awaited before the first byte from the server reaches the client. */
  async beforeRelease(): Promise<void> {
    await this.startLoadCheck();
    this.checked = true;
  }

  /** For a session without a handshake (a stateless client): the load check still runs before the first byte.
   *  False when it failed (the session is closing). */
  async passedBeforeFirstByte(): Promise<boolean> {
    if (this.checked) return true;
    try {
      await this.beforeRelease();
      return true;
    } catch (err) {
      this.failFrom(err);
      return false;
    }
  }

  private async list(source: ListingSource): Promise<void> {
    this.lastListStartSeq = this.nextSeq();
    this.callsSinceList = 0;
    this.lastListAt = Date.now();
    const tools = await listAllTools(this.server, this.cfg.caps);
    const decisions = (this.judge as SurfaceJudge).judge(tools, source, false);
    if (decisions.serverRefusal) throw new SurfaceRefusal(decisions.serverRefusal, decisions.refusal ?? { code: 'surface_refused' });
    this.proven = provenTools(decisions);
    this.rules?.listed(tools, source);
  }
}
