import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { escaped } from '../escape.js';

// The server's stderr as `run` relays it to its own (the client's log of the warden, beside the warden's escaped
// reports and alerts): line by line, each line through the one escaper and behind a prefix that names the server
// (ADR 0039), so no server line acts on a terminal or reads as the warden's. The format:
//   [server ID] TEXT        a line of the server's (its last one too, if the stream ended without a newline)
//   [server ID, cut] TEXT   the first SERVER_LINE_MAX characters of a longer line: the rest follows, same prefix
// A line never starts with "mcp-warden" (the warden's reports and alerts do). A CR before the newline ends the
// line with it; any other CR is a control, shown escaped as every control is.

/** Characters (UTF-16 units) of a server's line held before it is cut: what the relay keeps in memory. */
export const SERVER_LINE_MAX = 16 * 1024;

/** Characters of the server's last line kept for the warden's report when it exits before answering. */
const LAST_KEPT = 1024;

/** Piped between the server's stderr and the warden's: backpressure passes through it as through a plain pipe.
 *  `last.line` holds the start of the last non-blank line relayed (raw: whoever prints it escapes it). */
export function serverStderrRelay(id: string, last: { line?: string } = {}): Transform {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  const line = (text: string, cut = false): string => {
    if (text.trim() !== '') last.line = text.slice(0, LAST_KEPT);
    return `[server ${id}${cut ? ', cut' : ''}] ${escaped(text)}\n`;
  };
  /** The lines of `text` that are complete (or cut); what follows the last of them stays in `partial`. */
  const take = (text: string): string => {
    let out = '';
    let rest = partial + text;
    for (;;) {
      const nl = rest.indexOf('\n');
      const end = nl > 0 && rest[nl - 1] === '\r' ? nl - 1 : nl;
      if (nl >= 0 && end <= SERVER_LINE_MAX) {
        out += line(rest.slice(0, end));
        rest = rest.slice(nl + 1);
      } else if (rest.length > SERVER_LINE_MAX) {
        // never between the two halves of a surrogate pair
        const at = /[\ud800-\udbff]/.test(rest[SERVER_LINE_MAX - 1] as string) ? SERVER_LINE_MAX - 1 : SERVER_LINE_MAX;
        out += line(rest.slice(0, at), true);
        rest = rest.slice(at);
      } else break;
    }
    partial = rest;
    return out;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      done(null, take(decoder.write(chunk)) || undefined);
    },
    flush(done: TransformCallback) {
      const out = take(decoder.end());
      done(null, out + (partial ? line(partial) : '') || undefined);
      partial = '';
    },
  });
}
