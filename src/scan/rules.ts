// The first-trust scan's rules (issue 30): what each finding code means, how severe it is, why it is a rule, and
// the public example it comes from. Deterministic and offline: text patterns in code (text-rules.ts), no model,
// no network. A change to any rule raises SCAN_RULES_VERSION, so a finding can be traced to the rules that made it.

export const SCAN_RULES_VERSION = 1;

export type Severity = 'high' | 'medium' | 'low';

export interface Rule {
  severity: Severity;
  /** What was found, in a few words. */
  title: string;
  /** Why it is a finding: what a client or model does with it. */
  rationale: string;
  /** The public example it comes from (described, not copied). */
  source: string;
}

export const RULES = {
  TAG_CHARACTERS: {
    severity: 'high',
    title: 'Unicode tag characters',
    rationale: 'Tag characters (U+E0000–E007F) render as nothing but a model reads them as ASCII: a second text only the model sees.',
    source: 'ASCII smuggling with Unicode tags, Embrace The Red (2024), shown against chat assistants and MCP tool descriptions',
  },
  BIDI_CONTROL: {
    severity: 'high',
    title: 'bidirectional override or isolate',
    rationale: 'Embeddings, overrides and isolates (U+202A–202E, U+2066–2069) reorder what a person sees against what a model reads.',
    source: 'Trojan Source, Boucher and Anderson (CVE-2021-42574)',
  },
  ZERO_WIDTH: {
    severity: 'high',
    title: 'zero-width or invisible filler characters',
    rationale: 'Zero-width spaces and joiners, word joiners, invisible operators, the BOM inside text and Hangul fillers hide text or split words so a reviewer and a filter read something else than the model.',
    source: 'Rules File Backdoor, Pillar Security (2025): hidden instructions in AI configuration files',
  },
  VARIATION_SELECTORS: {
    severity: 'high',
    title: 'variation selectors outside emoji',
    rationale: 'Variation selectors (U+FE00–FE0F after a non-emoji, U+E0100–E01EF anywhere) carry bytes invisibly: a payload hidden in one visible character.',
    source: 'Emoji smuggling with variation selectors, Paul Butler (2025)',
  },
  TERMINAL_CONTROL: {
    severity: 'high',
    title: 'terminal control characters',
    rationale: 'Escape sequences and other controls rewrite what a terminal shows (hide lines, move the cursor, recolour) while the model reads them whole.',
    source: 'Deceiving users with ANSI terminal codes in MCP, Trail of Bits (2025)',
  },
  NAME_HOMOGLYPH: {
    severity: 'high',
    title: 'look-alike letters in a name',
    rationale: 'A tool name of letters from other scripts that read as Latin ones passes for another tool to a person and a model.',
    source: 'IDN homograph attacks; tool name collisions, Invariant Labs MCP security notes (2025)',
  },
  NAME_NON_ASCII: {
    severity: 'medium',
    title: 'a name outside ASCII',
    rationale: 'Tool names are meant to be [A-Za-z0-9_.-]; anything else is worth a look before it is trusted.',
    source: 'MCP specification, tool names (2025-11-25)',
  },
  HIDDEN_MARKUP: {
    severity: 'high',
    title: 'instructions in pseudo-markup or comments',
    rationale: 'Tags such as <IMPORTANT> or <system>, and HTML comments, mark text meant for the model that clients hide or shorten.',
    source: 'Tool poisoning attacks, Invariant Labs (2025): an <IMPORTANT> block in a tool description',
  },
  CONCEAL_FROM_USER: {
    severity: 'high',
    title: 'asks the model to keep something from the user',
    rationale: 'No honest tool needs the model to hide its actions or its reasons from the person it works for.',
    source: 'Tool poisoning attacks, Invariant Labs (2025): "do not mention this to the user"',
  },
  SENSITIVE_FILE_READ: {
    severity: 'high',
    title: 'asks to read or send credentials files',
    rationale: 'Text that tells the model to open or pass on keys and credentials (~/.ssh, ~/.aws, ~/.netrc, an MCP client config) turns any file tool into an exfiltration step.',
    source: 'Tool poisoning attacks, Invariant Labs (2025): reading ~/.ssh/id_rsa and ~/.cursor/mcp.json into a side parameter',
  },
  SENSITIVE_PATH: {
    severity: 'medium',
    title: 'mentions a credentials path',
    rationale: 'A credentials path named in a description without a request to read it: often documentation, sometimes a first step.',
    source: 'Tool poisoning attacks, Invariant Labs (2025)',
  },
  EXFILTRATION: {
    severity: 'high',
    title: 'asks to send data to an address',
    rationale: 'Text that tells the model to send the conversation, files, keys or results to a URL or an e-mail address moves the user\'s data out without a call the user chose.',
    source: 'Indirect prompt injection to exfiltrate chat data, Embrace The Red (2023–2025); WhatsApp MCP exfiltration, Invariant Labs (2025)',
  },
  TOOL_DIRECTIVE: {
    severity: 'high',
    title: 'directs the model about other tools or instructions',
    rationale: 'A tool whose text overrides earlier instructions or orders the model around other tools ("before using any other tool", "instead of send_email") takes over behaviour it does not own.',
    source: 'Line jumping, Trail of Bits (2025); tool shadowing, Invariant Labs (2025)',
  },
  PADDING: {
    severity: 'high',
    title: 'text after long padding',
    rationale: 'Text after a long run of spaces or blank lines is off-screen in most clients and in full view of the model.',
    source: 'Tool poisoning attacks, Invariant Labs (2025): instructions pushed past the visible part of a description',
  },
  HISTORY_PARAMETER: {
    severity: 'high',
    title: 'a parameter that asks for the conversation',
    rationale: 'A parameter named or described to hold the conversation, earlier messages or the system prompt ("sidenote", "context", "feedback") makes every call carry the user\'s data to the server.',
    source: 'Tool poisoning attacks, Invariant Labs (2025): a "sidenote" parameter; HiddenLayer (2025): parameters that leak the system prompt',
  },
  SECRET_PARAMETER: {
    severity: 'high',
    title: 'a parameter that asks for a secret',
    rationale: 'A parameter described to receive a password, key, token or seed phrase makes the model hand the user\'s secrets to the server.',
    source: 'Tool poisoning attacks, Invariant Labs (2025)',
  },
  SHADOW_REFERENCE: {
    severity: 'high',
    title: "refers to another enrolled server's tool",
    rationale: 'A server whose text names another server\'s tool can change how the model uses it (extra recipients, other arguments) without ever being called.',
    source: 'Tool shadowing, Invariant Labs (2025)',
  },
  SHADOW_NAME: {
    severity: 'high',
    title: "the same tool name as another enrolled server's",
    rationale: 'Two servers exposing one tool name leave the choice of which runs to the client and the model; one can stand in for the other.',
    source: 'Tool name collisions, Snyk agent-scan and Invariant Labs MCP-scan (2025)',
  },
} as const satisfies Record<string, Rule>;

export type FindingCode = keyof typeof RULES;

export const FINDING_CODES = Object.keys(RULES) as FindingCode[];

export function isFindingCode(code: string): code is FindingCode {
  return Object.hasOwn(RULES, code);
}
