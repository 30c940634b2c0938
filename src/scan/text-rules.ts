import { unhomoglyph } from './confusables.js';
import type { FindingCode } from './rules.js';

// The text patterns of the scan (rules.ts says why each exists). Every pattern is linear in the text: gaps are
// bounded ({0,N} of a class that stops at a sentence end), nothing nests a quantifier, so a string of megabytes
// costs its length times a constant. A hit is reported once per code and string, at its first offset.

export interface TextHit {
  code: FindingCode;
  /** UTF-16 offset of the hit in the string. */
  at: number;
  /** Its length in UTF-16 units (what the excerpt centres on). */
  length: number;
}

/** Code points that hide or reorder text, by the code they are reported under. */
const CHARACTER_RULES: [FindingCode, RegExp][] = [
  ['TAG_CHARACTERS', /[\u{E0000}-\u{E007F}]/u],
  ['BIDI_CONTROL', /[\u202A-\u202E\u2066-\u2069]/u],
  // A joiner inside an emoji sequence (👩‍💻) and a non-joiner between letters (Persian, Indic scripts) are
  // writing; anywhere else, and any run of them, they hide.
  ['ZERO_WIDTH', /[\u200B\u2060-\u2064\uFEFF\u180E\u034F\u115F\u1160\u3164\uFFA0\u17B4\u17B5]|[\u200C\u200D]{2}|(?<!\p{L})\u200C|\u200C(?!\p{L})|(?<!\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]?)\u200D|\u200D(?!\p{Extended_Pictographic})/u],
  ['VARIATION_SELECTORS', /[\u{E0100}-\u{E01EF}]|(?<![\p{Emoji}\u200D\uFE0F])[\uFE00-\uFE0F]/u],
  // C0 but tab, line feed and carriage return; DEL; C1.
  ['TERMINAL_CONTROL', /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u],
];

/** Paths of keys and credentials, as a model would be told to find them. */
const SECRET_PATH = String.raw`(?<![\w.-])\.(?:ssh|aws|gnupg|kube|docker|azure|config[\\/]gcloud)(?![\w.-])|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.(?:netrc|npmrc|pypirc|git-credentials|pgpass)\b|/etc/(?:shadow|sudoers)\b|\bmcp\.json\b|\bclaude_desktop_config\b|\bwallet\.dat\b|\bprivate[ _-]?keys?\b`;
const READ_VERB = String.raw`\b(?:read|open|cat|load|include|attach|upload|send|pass|provide|copy|paste|forward|contents?\s+of|print)\b`;
/** Within one sentence: no line end in the gap, and no period, question or exclamation mark before a space
 *  (one inside a path or a domain, ~/.ssh or docs.example.com, does not end a sentence). */
const GAP = (n: number): string => `(?:[^.!?\\n]|[.!?](?=\\S)){0,${n}}`;

/** Words without which a rule cannot match, in lower case (tested on the text lowered once): a cheap pass
 *  before the rule's own pattern. */
const TRIGGER: Partial<Record<FindingCode, RegExp>> = {
  HIDDEN_MARKUP: /[<[]/,
  CONCEAL_FROM_USER: /user|secretly|covertly/,
  SENSITIVE_FILE_READ: /ssh|aws|gnupg|kube|docker|azure|gcloud|id_|netrc|npmrc|pypirc|credentials|pgpass|shadow|sudoers|mcp\.json|claude_desktop|wallet|private/,
  EXFILTRATION: /https?:|@|address|endpoint|webhook|url/,
  TOOL_DIRECTIVE: /tool|function|instruction|direction|rule|prompt|guideline/,
};
TRIGGER.SENSITIVE_PATH = TRIGGER.SENSITIVE_FILE_READ;

/** Below this length no instruction pattern can match (the shortest, "<system>", is 8). */
const SHORTEST_PATTERN = 8;
const IDENTIFIER = /^[A-Za-z0-9_$-]{0,64}$/;
/** Printable ASCII with tab and line ends: no character rule can match. */
const PLAIN = /^[\t\n\r\x20-\x7e]*$/;

const PATTERN_RULES: [FindingCode, RegExp][] = [
  ['HIDDEN_MARKUP', /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|override|assistant|note[_ -]?to[_ -]?(?:ai|assistant|model|llm))\b[^<>]{0,200}>|<!--|\[\s*(?:system|important|hidden)\s*(?:message|instructions?|note)?\s*\]/i],
  ['CONCEAL_FROM_USER', new RegExp(String.raw`\b(?:do\s+not|don'?t|never|must\s+not|should\s+not|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|notify(?:ing)?|alert(?:ing)?|let(?:ting)?|show(?:ing)?)\b${GAP(40)}\b(?:the\s+)?user\b|\b(?:hide|conceal|keep)\b${GAP(40)}\bfrom\s+(?:the\s+)?user\b|\bthe\s+user\s+(?:must|should|need|may)\s*(?:not|n't)\s+(?:know|see|notice|be\s+told|find\s+out)\b|\b(?:secretly|covertly)\b`, 'i')],
  ['SENSITIVE_FILE_READ', new RegExp(`${READ_VERB}${GAP(80)}(?:${SECRET_PATH})|(?:${SECRET_PATH})${GAP(80)}${READ_VERB}`, 'i')],
  ['SENSITIVE_PATH', new RegExp(SECRET_PATH, 'i')],
  ['EXFILTRATION', new RegExp(String.raw`\b(?:send|post|upload|forward|transmit|exfiltrate|submit|report|leak|copy|bcc|cc)\b${GAP(80)}\b(?:conversation|chat|history|messages?|contents?|files?|keys?|tokens?|credentials?|secrets?|passwords?|data|results?|e-?mails?)\b${GAP(80)}(?:\bhttps?://|\bto\s+[\w.+-]+@[\w-]+\.[\w.-]+|\b(?:to|at)\s+(?:the\s+)?(?:address|endpoint|webhook|url)\b)`, 'i')],
  ['TOOL_DIRECTIVE', new RegExp(String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|other|system|user'?s?)\s+(?:instructions|directions|rules|prompts?|guidelines)\b|\b(?:before|after|instead\s+of|rather\s+than)\s+(?:using|calling|invoking|running)\s+(?:any|every|all|other|another|each)\b${GAP(40)}\btools?\b|\b(?:always|must|first)\s+(?:call|use|invoke|run)\s+this\s+tool\s+(?:first|before)\b|\b(?:do\s+not|don'?t|never)\s+(?:use|call|invoke)\s+(?:any\s+)?(?:other|another|the\s+\S+)\s+tools?\b|\bwhen(?:ever)?\b${GAP(60)}\b(?:tool|function)\b${GAP(60)}\b(?:is\s+(?:called|used|invoked))\b${GAP(60)}\b(?:must|always|also|instead)\b`, 'i')],
];

/** Property names that ask for the conversation by their name alone. */
const HISTORY_NAME = /^(?:side_?note|notes?_?for_?(?:the_?)?(?:ai|assistant|model|llm)|conversation(?:_?history|_?context)?|chat_?(?:history|log|context)|message_?history|previous_?messages|prior_?messages|full_?context|system_?prompt|prompt_?history|memory_?dump)$/i;
const HISTORY_ASK = new RegExp(String.raw`\b(?:entire|full|whole|complete|all\s+(?:of\s+)?the|every|previous|prior|earlier|recent)\b${GAP(30)}\b(?:conversation|chat(?:\s+(?:history|log|messages))?|context\s+window)\b|\b(?:previous|prior|earlier)\s+messages\b|\bmessages?\s+(?:so\s+far|history)\b|\bsystem\s+prompt\b|\binstructions\s+you\s+(?:were|have\s+been)\s+given\b`, 'i');
const SECRET_ASK = new RegExp(String.raw`\b(?:your|the\s+user'?s?|user'?s?|their|any|all)\b${GAP(30)}\b(?:passwords?|passphrases?|api[ _-]?keys?|access[ _-]?tokens?|secret[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|seed[ _-]?phrases?|mnemonics?|credentials?|credit[ _-]?card)\b`, 'i');

/** The hits of the character and instruction rules in one string. */
export function textHits(text: string): TextHit[] {
  const hits: TextHit[] = [];
  if (!PLAIN.test(text)) {
    for (const [code, re] of CHARACTER_RULES) {
      const m = re.exec(text);
      if (m) hits.push({ code, at: m.index, length: m[0].length });
    }
  }
  // A short text, or one word of letters, digits, "_", "-" ("object", "additionalProperties", a parameter's name),
  // holds no sentence, no markup and no path: only the character rules above apply to it.
  if (text.length < SHORTEST_PATTERN || IDENTIFIER.test(text)) return hits;
  const lower = text.toLowerCase();
  for (const [code, re] of PATTERN_RULES) {
    if (code === 'SENSITIVE_PATH' && hits.some((h) => h.code === 'SENSITIVE_FILE_READ')) continue;
    if (TRIGGER[code]?.test(lower) === false) continue;
    const m = re.exec(text);
    if (!m) continue;
    // "is never read", "do not open": a credentials path named in a negation is documentation.
    if (code === 'SENSITIVE_FILE_READ' && NEGATION.test(m[0])) continue;
    hits.push({ code, at: m.index, length: m[0].length });
  }
  const padding = paddingAt(text);
  if (padding >= 0) hits.push({ code: 'PADDING', at: padding, length: 1 });
  return hits;
}

/** Where a run of 120 spaces (tabs, no-break spaces) or of 24 line ends with only blanks between them begins,
 *  or -1. One pass. */
function paddingAt(text: string): number {
  let spaces = 0;
  let lines = 0;
  let runStart = 0;
  let linesStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0xa0) {
      if (spaces++ === 0) runStart = i;
      if (spaces >= 120) return runStart;
    } else if (c === 0x0a || c === 0x0d) {
      spaces = 0;
      if (c === 0x0a) {
        if (lines++ === 0) linesStart = i;
        if (lines >= 24) return linesStart;
      }
    } else {
      spaces = 0;
      lines = 0;
    }
  }
  return -1;
}

const NEGATION = /\b(?:never|not|cannot|no)\b|n't\b/i;

/** The hits of a parameter: its name (a property key of an input schema) and its description. */
export function parameterHits(name: string, description: string | undefined): TextHit[] {
  const hits: TextHit[] = [];
  if (HISTORY_NAME.test(name)) hits.push({ code: 'HISTORY_PARAMETER', at: 0, length: name.length });
  else if (description !== undefined) {
    const m = HISTORY_ASK.exec(description);
    if (m) hits.push({ code: 'HISTORY_PARAMETER', at: m.index, length: m[0].length });
  }
  const s = description === undefined ? null : SECRET_ASK.exec(description);
  if (s) hits.push({ code: 'SECRET_PARAMETER', at: s.index, length: s[0].length });
  return hits;
}

/** A tool name's finding: letters of other scripts that read as Latin ones (high), or anything outside ASCII. */
export function nameHit(name: string): TextHit | undefined {
  // Printable ASCII only: nothing to say (the characters rules see controls).
  if (/^[\x20-\x7e]*$/.test(name)) return undefined;
  const at = name.search(/[^\x20-\x7e]/);
  const skeleton = unhomoglyph(name);
  return { code: skeleton !== name && /^[\x20-\x7e]*$/.test(skeleton) ? 'NAME_HOMOGLYPH' : 'NAME_NON_ASCII', at, length: 1 };
}

/** The skeleton two names are compared by for shadowing: look-alikes mapped, case folded. */
export function nameSkeleton(name: string): string {
  return unhomoglyph(name).toLowerCase();
}
