import type { JsonValue } from '../protocol/json/reader.js';
import type { Line } from '../protocol/line.js';
import type { CallRules } from './call-rules.js';
import type { ClientRequest, ClientRequestMessage } from './channel.js';
import { unjudgedError } from './refusal-text.js';
import { shapedBytes, shapedResponse } from './response-shape.js';
import type { ServerReports } from './server-reports.js';
import type { SessionConfig } from './session-config.js';
import type { SurfaceGate } from './surface-gate.js';
import { HeldItems, type ServerItem } from './waiting-message.js';

// The handshake hold of a 2025 session (session.ts): the client's initialize is relayed, and the server's
// initialize result is held while the warden sends `initialized` itself, lists every page, and judges the surface
// against the lock; only then is the result released (with whatever the server sent meanwhile, in order), or the
// client's initialize answered with the refusal.

/** What the handshake hold needs of the session it is part of. */
export interface HandshakeHost {
  cfg: SessionConfig;
  rules: CallRules | undefined;
  surface: SurfaceGate;
  reports: ServerReports;
  forward(msg: ClientRequestMessage, bytes: Buffer): Promise<ClientRequest | undefined>;
  toClient(bytes: Line): void;
  failFrom(err: unknown): void;
  stopped(): boolean;
  /** A server item, judged by the session as it would be had it not waited. */
  onServerItem(item: ServerItem): Promise<void>;
}

export class HandshakeHold {
  state: 'new' | 'initializing' | 'open' = 'new';
  /** The client's initialize: its own id (for the refusal) and the id the server was given. */
  initId: string | undefined;
  initServerId: string | undefined;
  swallowInitialized = false;
  /** True once the initialize result was judged and released to the client (a surface was reached). */
  released = false;
  /** What the server sent before its initialize result; judged like the rest once the session is released. */
  readonly held: HeldItems;

  constructor(private readonly host: HandshakeHost) {
    this.held = new HeldItems(host.cfg.channel.json);
  }

  /** Relays the client's initialize; its answer is held and judged (handshake()). */
  async gateInitialize(msg: ClientRequestMessage, bytes: Buffer): Promise<void> {
    this.state = 'initializing';
    const params = msg.value.get('params');
    this.host.cfg.clientSeen?.(params instanceof Map ? params.get('clientInfo') : undefined);
    this.host.rules?.clientCapabilities(params);
    this.initId = msg.id;
    const request = await this.host.forward(msg, bytes);
    if (request) this.initServerId = request.serverId;
  }

  /** Releases what was held, in order, through the same judge and gates as what comes after. */
  async releaseHeld(): Promise<void> {
    for (const item of this.held.take()) {
      if (this.host.stopped()) return;
      await this.host.onServerItem(item);
    }
  }

  async handshake(result: Map<string, JsonValue>, heldBytes: Line): Promise<void> {
    this.state = 'open';
    const answer = this.initializeAnswer(result, heldBytes, this.initId as string);
    if (result.has('error')) {
      // The server refused initialize itself (an error beside a result is the answer too): there is no surface;
      // the client is told so in the warden's words, and a retry is gated and judged like the first.
      const refused = unjudgedError(this.host.cfg, this.initId as string, 'initialize', result);
      this.state = 'new';
      this.initId = this.initServerId = undefined;
      try {
        await this.host.surface.beforeRelease();
      } catch (err) {
        this.host.failFrom(err);
        return;
      }
      this.host.toClient(refused);
      await this.releaseHeld();
      return;
    }
    try {
      this.swallowInitialized = true; // the gate sends the server its own
      await this.host.surface.verifyHandshake(result.get('result'), () => this.host.stopped());
      if (this.host.stopped()) return;
    } catch (err) {
      this.host.failFrom(err);
      return;
    }
    this.released = true;
    this.host.toClient(answer);
    await this.releaseHeld();
  }

  /** The held initialize answer as relayed: its envelope only (response-shape.ts). */
  private initializeAnswer(value: Map<string, JsonValue>, held: Line, clientId: string): Line {
    const shaped = shapedResponse(value, 'initialize', undefined);
    if (shaped.dropped.envelope.length === 0) return held;
    this.host.reports.membersDropped('initialize', shaped.dropped);
    return shapedBytes(shaped, clientId, held);
  }
}
