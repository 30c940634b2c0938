import { randomBytes } from 'node:crypto';
import { unhomoglyph } from '../scan/confusables.js';
import type { Classified } from '../protocol/message.js';
import { ParseBudget, UNKNOWN, UNKNOWN_LETTERS, decodedForms, holdsBidi, holdsMarkup, shownForms, withReadings } from './shown-forms.js';
import { markedOnlyDefinition } from './markdown-reading.js';

// The warden's own questions to the user, asked through the client with an MCP elicitation request (a call of
// an `ask` tool is held meanwhile). The question's id is the warden's and random: the server never sees it and
// cannot guess it, so no request of the server's can be confused with it and its answer never reaches the
// server. An answer that comes after the question was given up is still the warden's and is not forwarded.

export type AskAnswer = 'accept' | 'decline' | 'cancel' | 'timeout' | 'error' | 'withdrawn';

const ID_PREFIX = 'mcp-warden-ask-';
const ID_MARK = Buffer.from(ID_PREFIX);
const BACKSLASH = 0x5c;
/** Ids of questions already settled that are still recognised (a late answer is consumed, not relayed). */
const REMEMBERED = 256;

/**
 * Whether a server's elicitation request names mcp-warden, however spelled, in any string of its params a client
 * may show: the message, requestedSchema's title and description, a field's name, title and description, enum
 * names, a oneOf's titles, a URL. A user who has seen the warden ask would take it for one of its questions; no
 * honest server needs the warden's name in a question.
 */
export function impersonatesWarden(params: unknown): boolean {
  return questionImpersonation(params) !== undefined;
}

/** Why a server's question is refused: 'markup' holds HTML (a client may hide or show it as it likes: review 24),
 *  'worded' names mcp-warden as a client may show it, 'bidi' holds a bidi control (a client may show its text
 *  reversed, the name spelled backwards), 'too_large' holds more strings, longer or deeper than the warden reads
 *  (WALK, as an error answer: review 23). */
export type Impersonation = 'markup' | 'worded' | 'bidi' | 'too_large';

/** Why a server's elicitation request (its params), or an input request (`inputRequests`, with its
 *  `requestState` as `opaque`: not a question, so read for the name but not refused for HTML; both walked under one
 *  bound), is refused; undefined when it may be asked. */
export function questionImpersonation(question: unknown, opaque?: unknown): Impersonation | undefined {
  const strings = boundedStrings([question, opaque]);
  if (strings === undefined) return 'too_large';
  const questions = opaque === undefined ? strings.length : (boundedStrings([question]) as string[]).length;
  return wording(strings, questions, new ParseBudget(WALK.parsed));
}

/** Whether a string names mcp-warden in any form a client may show it in (shown-forms.ts): as written, its
 *  percent-escapes and character references undone, as Markdown renders it; a reference the warden does not know
 *  stands for any few letters. A string too large to read names it (fail closed). */
export function namesWarden(text: string): boolean {
  return shownForms(text, new ParseBudget(WALK.parsed))?.some(formNamesWarden) ?? true;
}

function formNamesWarden(form: string): boolean {
  if (markedOnlyDefinition(form)) return true; // fail closed: marked hides it with what follows (markdown-reading.ts)
  if (!form.includes(UNKNOWN)) return foldedForName(form).includes(wardenName());
  return holdsNameWithUnknowns(form.split(UNKNOWN).map(foldedForName).join(UNKNOWN));
}

/** Of the first string refused: 'markup' if it is one of the first `questions` strings and a form holds HTML,
 *  'bidi' if a form holds a bidi control, 'worded' if one names the warden, 'too_large' if the parser's budget is
 *  spent first (each string's forms decoded, read and folded once). */
function wording(strings: string[], questions: number, budget: ParseBudget): Impersonation | undefined {
  for (const [i, s] of strings.entries()) {
    const decoded = decodedForms(s);
    if (i < questions && decoded.some(holdsMarkup)) return 'markup';
    const forms = withReadings(decoded, budget);
    if (forms === undefined) return 'too_large';
    if (forms.some(holdsBidi)) return 'bidi';
    if (forms.some(formNamesWarden)) return 'worded';
  }
  return undefined;
}

/** The name found in a folded text whose UNKNOWN each stand for up to UNKNOWN_LETTERS letters (a walk of the
 *  name's positions as a bit set: every start, each letter advancing the positions it matches). */
function holdsNameWithUnknowns(folded: string): boolean {
  const name = wardenName();
  const end = 1 << name.length;
  let at = 1;
  for (const c of folded) {
    let next = 1;
    if (c === UNKNOWN) {
      next |= at;
      for (let k = 1; k <= UNKNOWN_LETTERS; k++) next |= at << k;
    } else {
      for (let j = 0; j < name.length; j++) if (at & (1 << j) && name[j] === c) next |= 1 << (j + 1);
    }
    if (next & end) return true;
    at = next & (2 * end - 1);
  }
  return false;
}

/** Characters of a walk's forms the Markdown parser reads, at most (~1 us each on '![' runs, its slowest input
 *  measured: ~80 ms CPU at the bound; docs/adr/0067-markdown-reading.md). */
const PARSED = 96 * 1024;

/** Bounds of the walk over what a server shows the user through the client (an error answer's `error`, an
 *  elicitation's params, an input request): each string is decoded into several forms and folded, so its size
 *  is the warden's work; an honest question or error is far smaller. */
const WALK = { depth: 16, strings: 2048, chars: 256 * 1024, parsed: PARSED };

/** Every string of parsed JSON values, member names included (no member is read by name, so none can hide from a
 *  reader that ignores case, and a client may show a field's name as its label), or undefined beyond WALK (one
 *  bound for all the values). */
function boundedStrings(values: unknown[], depths?: number[]): string[] | undefined {
  const strings: string[] = [];
  let chars = 0;
  const walk = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string') {
      chars += v.length;
      strings.push(v);
      return strings.length <= WALK.strings && chars <= WALK.chars;
    }
    if (!Array.isArray(v) && !(v instanceof Map)) return true;
    if (depth >= WALK.depth) return false;
    if (Array.isArray(v)) return v.every((x) => walk(x, depth + 1));
    for (const [k, x] of v as Map<string, unknown>) if (!walk(k, depth) || !walk(x, depth + 1)) return false;
    return true;
  };
  return values.every((v, i) => walk(v, depths?.[i] ?? 0)) ? strings : undefined;
}

/**
 * Whether a server's error answer names mcp-warden in a string a client may show, or is too large to tell:
 * revision 2025-11-25's URLElicitationRequiredError (-32042) puts URL-mode elicitations (message, url) in
 * `error.data.elicitations[]`, and a client shows them and offers to open the URL; any other error's message
 * and data reach the user too. Beyond WALK the answer is refused as well (fail closed).
 */
export function errorImpersonation(error: unknown): Impersonation | undefined {
  const data = error instanceof Map ? error.get('data') : undefined;
  const elicitations = data instanceof Map ? data.get('elicitations') : undefined;
  // The elicitations' strings are questions (HTML refused), walked first; the rest of the error (a stack trace
  // holds "<anonymous>") is read as a renderer shows it. Both under one bound.
  const rest = elicitations === undefined ? error : withoutElicitations(error as Map<string, unknown>, data as Map<string, unknown>);
  const strings = boundedStrings([elicitations, rest], [2, 0]);
  if (strings === undefined) return 'too_large';
  const questions = elicitations === undefined ? 0 : (boundedStrings([elicitations], [2]) as string[]).length;
  return wording(strings, questions, new ParseBudget(WALK.parsed));
}

/** Why a completion answer's values are refused (review 28): a client shows them to the user in its argument
 *  picker, as it shows an error's message, so they are read as an error is ('worded', 'bidi', 'too_large'; HTML is
 *  not refused). The result is the shaped one (completion.ts: at most 100 values of 1,024 characters). */
export function completionImpersonation(result: unknown): Impersonation | undefined {
  const completion = result instanceof Map ? result.get('completion') : undefined;
  const values = completion instanceof Map ? completion.get('values') : undefined;
  const strings = boundedStrings([values]);
  if (strings === undefined) return 'too_large';
  return wording(strings, 0, new ParseBudget(WALK.parsed));
}

/** The error with its data's `elicitations` member left out (walked on its own, as questions). */
function withoutElicitations(error: Map<string, unknown>, data: Map<string, unknown>): Map<string, unknown> {
  const rest = new Map(data);
  rest.delete('elicitations');
  return new Map([...error, ['data', rest]]);
}

/** Text reduced to what it reads as (ADR 0039), in passes until nothing changes: look-alike letters of other
 *  scripts mapped to the Latin ones they imitate by Unicode's confusables table (unhomoglyph), compatibility forms
 *  decomposed and accents dropped (NFKD, marks removed: "ḿ" is an m), case folded; then spaces, dashes, invisible
 *  and every other character that is not a letter or a digit set aside. */
export function foldedForName(text: string): string {
  let s = text;
  for (let pass = 0; pass < 4; pass++) {
    const next = unhomoglyph(s).normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
    if (next === s) break;
    s = next;
  }
  return s.replace(/[^\p{L}\p{N}]/gu, '');
}

/** The warden's name folded, made at the first question (not at import: folding needs the confusables table,
 *  which the bundle parses at its first use, docs/adr/0069-run-memory-on-node-24.md). */
let foldedName: string | undefined;
const wardenName = (): string => (foldedName ??= foldedForName('mcp-warden'));

export class ClientQuestions {
  private readonly waiting = new Map<string, (a: AskAnswer) => void>();
  private readonly settled = new Set<string>();

  constructor(private readonly send: (bytes: Buffer) => void) {}

  /** Whether a client line may answer one of the warden's questions (a cheap test before parsing it again). */
  mayAnswer(line: Buffer): boolean {
    // The id may be written with escapes ("\u006dcp-warden-ask-…"): a line with a backslash is read too.
    return (this.waiting.size > 0 || this.settled.size > 0) && (line.includes(ID_MARK) || line.includes(BACKSLASH));
  }

  /** Asks the user a yes/no question; resolves with their action, 'timeout', 'error' (the client answered with
   *  an error), or 'withdrawn' (the warden gave the question up: the call was cancelled, the session ended). */
  ask(message: string, timeoutMs: number, withdraw: AbortSignal): Promise<AskAnswer> {
    const id = JSON.stringify(ID_PREFIX + randomBytes(16).toString('hex'));
    return new Promise((resolve) => {
      const settle = (answer: AskAnswer): void => {
        if (!this.waiting.delete(id)) return;
        clearTimeout(timer);
        withdraw.removeEventListener('abort', onAbort);
        this.remember(id);
        if (answer === 'timeout' || answer === 'withdrawn') this.send(Buffer.from(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id},"reason":${JSON.stringify(answer === 'timeout' ? 'mcp-warden: no answer in time; the call was refused' : 'mcp-warden: the call was withdrawn')}}}\n`));
        resolve(answer);
      };
      const onAbort = (): void => settle('withdrawn');
      const timer = setTimeout(() => settle('timeout'), timeoutMs);
      this.waiting.set(id, settle);
      withdraw.addEventListener('abort', onAbort);
      const params = { message, requestedSchema: { type: 'object', properties: {} } };
      this.send(Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"elicitation/create","params":${JSON.stringify(params)}}\n`));
      if (withdraw.aborted) onAbort();
    });
  }

  /** Takes a client message that answers one of the warden's questions; false for any other message. */
  take(msg: Classified): boolean {
    if (msg.kind !== 'response') return false;
    const settle = this.waiting.get(msg.id);
    if (!settle) return this.settled.has(msg.id);
    const result = msg.value.get('result');
    const action = result instanceof Map ? result.get('action') : undefined;
    settle(action === 'accept' || action === 'decline' || action === 'cancel' ? action : 'error');
    return true;
  }

  /** Gives up every open question (the session is closing). */
  withdrawAll(): void {
    for (const settle of [...this.waiting.values()]) settle('withdrawn');
  }

  private remember(id: string): void {
    this.settled.add(id);
    if (this.settled.size > REMEMBERED) this.settled.delete(this.settled.values().next().value as string);
  }
}
