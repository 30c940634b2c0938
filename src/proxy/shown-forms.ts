// The forms a client may show a server's string in, for the warden's name check (review 22): a client renders a
// question's message as Markdown, which decodes HTML character references ("&#109;cp-warden" shows as
// "mcp-warden"), and a WHATWG URL parser percent-decodes a URL's host ("https://%6Dcp-warden.example" opens
// mcp-warden.example). The name is looked for in the string as written and in every decoded form: percent then
// references and references then percent, repeated (an escape may be escaped again), a few rounds at most.

/** Bidi controls a renderer obeys by laying text out reversed or reordered: embeddings, overrides, isolates. */
const BIDI = /[\u202A-\u202E\u2066-\u2069]/u;

/** Rounds of decoding (each round undoes one layer of percent-escapes and one of references). */
const ROUNDS = 4;

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

/** The string as written and each form a client may decode or render it to (distinct, at most 2 * (2 * ROUNDS +
 *  1)): every decoded form also as Markdown renders it (markdownShown). */
export function shownForms(text: string): string[] {
  const forms = decodedForms(text);
  for (const f of [...forms]) forms.add(markdownShown(f));
  return [...forms];
}

/**
 * What a Markdown renderer shows of a text, for the name check (review 23: "mc[](x)p-warden" renders as
 * `mc<a href="x"></a>p-warden`): link and image destinations and titles (`](…)`, one level of parentheses inside),
 * reference labels (`][…]`), reference definitions, HTML comments and tags are not shown; the link text is. Only
 * ever a second form: the text as written is checked too.
 */
export function markdownShown(s: string): string {
  if (!/[\]<]/.test(s)) return s;
  return s
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<\/?[A-Za-z][^<>]*>/g, '')
    .replace(/^ {0,3}\[[^\]\n]+\]:[^\n]*$/gm, '')
    .replace(/\]\((?:[^()\n]|\([^()\n]*\))*\)/g, ']')
    .replace(/\]\[[^\]\n]*\]/g, ']');
}

function decodedForms(text: string): Set<string> {
  const forms = new Set([text]);
  if (!text.includes('%') && !text.includes('&')) return forms;
  for (const order of [[percentDecoded, referencesDecoded], [referencesDecoded, percentDecoded]] as const) {
    let s = text;
    for (let round = 0; round < ROUNDS; round++) {
      const once = order[0](s);
      forms.add(once);
      const next = order[1](once);
      forms.add(next);
      if (next === s) break;
      s = next;
    }
  }
  return forms;
}

/** %XX runs decoded as UTF-8 (a byte that is not UTF-8 shows as U+FFFD); a % not followed by two hex digits kept. */
function percentDecoded(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8');
    }
  });
}

/** Numeric references (&#109; &#x6D;, the semicolon optional as an HTML parser reads them) and named ones. */
function referencesDecoded(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&#(?:[xX]([0-9A-Fa-f]{1,8})|([0-9]{1,10}));?|&([A-Za-z][A-Za-z0-9]{0,31});/g, (_whole: string, hex?: string, dec?: string, name?: string) => {
    if (name !== undefined) {
      const letter = LETTER_REF.exec(name);
      if (letter) return letter[1] as string;
      return Object.hasOwn(KNOWN_REFS, name) ? (KNOWN_REFS[name] as string) : UNKNOWN;
    }
    const cp = hex !== undefined ? Number.parseInt(hex, 16) : Number.parseInt(dec as string, 10);
    return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : '\uFFFD';
  });
}
