import { serialize } from '../protocol/json/write.js';
import type { JsonObject } from '../protocol/json/reader.js';

// The warden's own requests must not be told apart from the client's by anything the warden controls. Ids are
// handled by the channel (one counter for both); this is the rest of a request's form: the order of its
// top-level members, whether an empty `params` is sent or left out, and the `_meta` the client sends on its
// requests (its progress token aside, which names one request of the client's). It is learned from the
// client's own requests on this session, per method where the client has sent that method, else from its
// latest request. Before any (out of band) it is an SDK client's form, which is what most clients send:
// {"method":…,"params":…,"jsonrpc":"2.0","id":N}, params left out when empty.

const MEMBERS = ['method', 'params', 'jsonrpc', 'id'] as const;

interface Form {
  order: string[];
  emptyParams: 'omit' | 'object';
  meta: JsonObject | undefined;
}

const SDK_FORM: Form = { order: [...MEMBERS], emptyParams: 'omit', meta: undefined };

export class RequestStyle {
  /** On a modern connection (revision 2026-07-28): the `_meta` envelope of the client request the warden acts for,
   *  as JSON text, carried by the warden's own requests instead of a learned one (docs/adr/0044). */
  envelope: string | undefined;
  /** Out of band over the stateless flow: an SDK v2 client's form, which puts `params` last when the request had
   *  none of its own (the envelope is added to the request after its id; docs/adr/0046). */
  private sdkModern = false;
  private latest: Form = SDK_FORM;
  private readonly byMethod = new Map<string, Form>();

  /** Forgets what was learned (a connection that probed revision 2026-07-28 and fell back to 2025: the probe's
   *  envelope is not the form of its 2025 requests). */
  reset(): void {
    this.latest = SDK_FORM;
    this.byMethod.clear();
    this.envelope = undefined;
  }

  /** Out of band over the stateless flow: every request carries `envelope` (JSON text) in an SDK v2 client's form. */
  speakModern(envelope: string): void {
    this.sdkModern = true;
    this.envelope = envelope;
  }

  /** Takes the form of one of the client's requests. */
  learn(method: string, request: JsonObject): void {
    const prior = this.byMethod.get(method) ?? this.latest;
    const order = [...request.keys()].filter((k) => (MEMBERS as readonly string[]).includes(k));
    if (!order.includes('params')) order.splice(order.indexOf('method') + 1, 0, 'params');
    if (order.length !== MEMBERS.length) return; // not a well-formed request: nothing to learn from
    const params = request.get('params');
    let emptyParams = prior.emptyParams;
    let meta: JsonObject | undefined;
    if (params === undefined) emptyParams = 'omit';
    else if (params instanceof Map) {
      if ([...params.keys()].every((k) => k === '_meta')) emptyParams = 'object';
      const m = params.get('_meta');
      if (m instanceof Map) {
        meta = new Map(m);
        meta.delete('progressToken');
        if (meta.size === 0) meta = undefined;
      }
    }
    const form = { order, emptyParams, meta };
    this.byMethod.set(method, form);
    this.latest = form;
  }

  /** One request line in the client's form. `id` is JSON text; params values are plain JSON. */
  build(method: string, params: Record<string, unknown> | undefined, id: string): string {
    const form = this.byMethod.get(method) ?? this.latest;
    const members: string[] = [];
    const order = this.sdkModern && Object.keys(params ?? {}).length === 0 ? ['method', 'jsonrpc', 'id', 'params'] : form.order;
    for (const k of order) {
      if (k === 'method') members.push(`"method":${JSON.stringify(method)}`);
      else if (k === 'jsonrpc') members.push('"jsonrpc":"2.0"');
      else if (k === 'id') members.push(`"id":${id}`);
      else {
        const p = paramsText(params, this.envelope ?? (form.meta && serialize(form.meta)));
        if (p !== undefined || form.emptyParams === 'object') members.push(`"params":${p ?? '{}'}`);
      }
    }
    return `{${members.join(',')}}\n`;
  }

  /** A notification without params in the client's form (the order of its request members, less the id). */
  buildNotification(method: string): string {
    const members = this.latest.order.filter((k) => k === 'method' || k === 'jsonrpc').map((k) => (k === 'method' ? `"method":${JSON.stringify(method)}` : '"jsonrpc":"2.0"'));
    return `{${members.join(',')}}\n`;
  }
}

function paramsText(params: Record<string, unknown> | undefined, meta: string | undefined): string | undefined {
  const parts = Object.entries(params ?? {}).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  if (meta !== undefined) parts.push(`"_meta":${meta}`);
  return parts.length > 0 ? `{${parts.join(',')}}` : undefined;
}
