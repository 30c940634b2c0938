import { joinLine, type Line } from '../protocol/line.js';
import type { ReadLimits } from '../protocol/json/reader.js';
import { classify } from '../protocol/message.js';
import type { ResponseMessage, ServerMessage } from './channel.js';

// A server message that has to wait (behind the warden's verification, or held until the initialize result)
// keeps its bytes and its envelope, not its value: what waits is bounded in bytes (ordered-queue.ts), and a
// value can cost seventy times its bytes (a line of `[{}]` elements: a Map and an array per five bytes). The
// value is read again from the same bytes, which nothing changes, when it is first used: the reader is
// deterministic, so it is the value the message was classified with (the id member aside, which an answer
// already carries as the client's: nothing reads it).

const WAITING = Symbol('waiting');

type Waitable = ServerMessage | ResponseMessage;

/** `msg` without its value in memory: the value is read from `bytes` again on first use. */
export function waiting<M extends Waitable>(msg: M, bytes: Line, limits: ReadLimits): M {
  if (WAITING in msg) return msg;
  const envelope =
    msg.kind === 'response'
      ? { kind: msg.kind, id: msg.id, idSpan: msg.idSpan }
      : msg.kind === 'request'
        ? { kind: msg.kind, method: msg.method, id: msg.id, idSpan: msg.idSpan }
        : { kind: msg.kind, method: msg.method };
  // The getter keeps the bytes and the kind only: a reference to `msg` would keep its value alive.
  const kind = msg.kind;
  let value: M['value'] | undefined;
  const out = { ...envelope, [WAITING]: true } as unknown as M;
  Object.defineProperty(out, 'value', {
    enumerable: true,
    get(): M['value'] {
      if (value === undefined) {
        const again = classify(joinLine(bytes), limits);
        // The same bytes classify the same way; anything else is a defect, and the session fails closed on it.
        if (again.kind !== kind) throw new Error(`a waiting server message read again as ${again.kind}, not ${kind}`);
        value = again.value as M['value'];
      }
      return value;
    },
  });
  return out;
}
