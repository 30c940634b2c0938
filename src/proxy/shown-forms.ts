// The forms a client may show a server's string in, for the warden's name check (review 22): a client renders a
// question's message as Markdown, which decodes HTML character references ("&#109;cp-warden" shows as
// "mcp-warden"), and a WHATWG URL parser percent-decodes a URL's host ("https://%6Dcp-warden.example" opens
// mcp-warden.example). The name is looked for in the string as written, in every decoded form (each round undoes
// one layer of percent-escapes and of references in one pass, to a fixpoint: an escape may be escaped again), and
// in what a Markdown renderer shows of each (markdown-reading.ts, within a budget of parsed characters).
import { markdownReadings, mayRender, readingCost } from './markdown-reading.js';

/** Bidi controls a renderer obeys by laying text out reversed or reordered: embeddings, overrides, isolates. */
const BIDI = /[\u202A-\u202E\u2066-\u2069]/u;

/** Rounds of decoding (each undoes one layer of percent-escapes and one of references: 8 rounds undo what 4 rounds
 *  of percent-then-references did, where a layer of each was undone in turn). */
const ROUNDS = 8;

/** HTML a renderer may hide letters in, or show differently (review 24): '<' then a letter, '/', '!' or '?' (a
 *  tag, a closing tag, a comment, declaration or CDATA, a processing instruction), conservatively: an autolink
 *  ("<https://…>") too, which a renderer taking it for a tag hides. */
const MARKUP = /<[A-Za-z/!?]/;

/** A named reference whose letter a renderer shows: an accented or mathematical letter (&aacute;, &mopf;). */
const LETTER_REF = /^([A-Za-z])(acute|grave|circ|tilde|uml|ring|cedil|caron|macr|ogon|breve|dot|strok|fr|opf|scr)$/;

/** Named references known to show no letter or digit (the fold drops them), and &amp; which may escape another. */
const KNOWN_REFS: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ensp: ' ', emsp: ' ', thinsp: ' ', shy: '', zwj: '', zwnj: '',
  hyphen: '-', dash: '-', minus: '-', ndash: '-', mdash: '-', period: '.', colon: ':', comma: ',', sol: '/', bsol: '\\',
  lowbar: '_', hellip: '...', middot: '.', bull: '.', copy: ' ', reg: ' ', trade: ' ', laquo: ' ', raquo: ' ',
  lsquo: ' ', rsquo: ' ', ldquo: ' ', rdquo: ' ', excl: '!', quest: '?', num: '#', percnt: '%', lpar: '(', rpar: ')',
};

/**
 * A named reference the warden does not know may show any letters (&rho; reads as a p): it is left in the decoded
 * form as UNKNOWN, which the name check takes for up to UNKNOWN_LETTERS letters of the name (fail closed).
 */
export const UNKNOWN = '\u0000';
export const UNKNOWN_LETTERS = 3;

/** Whether one form of a string holds a bidi control (each form is checked: a reference may decode to one). */
export function holdsBidi(form: string): boolean {
  return BIDI.test(form);
}

/** Whether one form of a question holds HTML (MARKUP): refused in a question, whatever it would show. */
export function holdsMarkup(form: string): boolean {
  return MARKUP.test(form);
}

/** Characters the Markdown parser may still read for one walk of a server's message (forms of every string): an
 *  honest question or error is far smaller; beyond it the message is refused as too large to read (fail closed). */
export class ParseBudget {
  constructor(public left: number) {}
}

/** The string as written and each form a client may decode it to (distinct, at most ROUNDS + 1). */
export function decodedForms(text: string): string[] {
  const forms = [text];
  let s = text;
  for (let round = 0; round < ROUNDS; round++) {
    const next = decodedOnce(s);
    if (next === s) break;
    forms.push(next);
    s = next;
  }
  return [...new Set(forms)];
}

/** The decoded forms and what a Markdown renderer shows of each that may render (distinct), or undefined when the
 *  budget is spent. */
export function withReadings(decoded: string[], budget: ParseBudget): string[] | undefined {
  const forms = new Set(decoded);
  for (const form of decoded) {
    if (!mayRender(form)) continue;
    budget.left -= readingCost(form);
    if (budget.left < 0) return undefined;
    for (const shown of markdownReadings(form)) forms.add(shown);
  }
  return [...forms];
}

/** Every form a client may show a text in (decodedForms, withReadings), or undefined beyond the budget. */
export function shownForms(text: string, budget: ParseBudget): string[] | undefined {
  return withReadings(decodedForms(text), budget);
}

/** One round: %XX runs and character references decoded in one pass. */
function decodedOnce(s: string): string {
  if (!s.includes('%') && !s.includes('&')) return s;
  return s.replace(ESCAPE, (whole: string, hex?: string, dec?: string, name?: string) => (whole.startsWith('%') ? percentDecoded(whole) : referenceDecoded(hex, dec, name)));
}

const ESCAPE = /(?:%[0-9A-Fa-f]{2})+|&#(?:[xX]([0-9A-Fa-f]{1,8})|([0-9]{1,10}));?|&([A-Za-z][A-Za-z0-9]{0,31});/g;

/** A run of %XX decoded as UTF-8 (a byte that is not UTF-8 shows as U+FFFD). */
function percentDecoded(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    return Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8');
  }
}

/** A numeric reference (&#109; &#x6D;, the semicolon optional as an HTML parser reads them) or a named one. */
function referenceDecoded(hex?: string, dec?: string, name?: string): string {
  if (name !== undefined) {
    const letter = LETTER_REF.exec(name);
    if (letter) return letter[1] as string;
    return Object.hasOwn(KNOWN_REFS, name) ? (KNOWN_REFS[name] as string) : UNKNOWN;
  }
  const cp = hex !== undefined ? Number.parseInt(hex, 16) : Number.parseInt(dec as string, 10);
  return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : '\uFFFD';
}
