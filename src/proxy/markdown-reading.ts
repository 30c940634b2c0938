import type MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { markdownIt } from './markdown-parser.js';

// What a Markdown renderer shows of a server's string, for the name check (reviews 23, 24): read from a CommonMark
// parser's tokens (markdown-it, pinned; docs/adr/0067-markdown-reading.md), not from patterns of our own (but GFM's
// footnote labels, which CommonMark has no token for). Shown:
// text, link text, code spans, code blocks and fences' contents; not shown: link and image destinations and titles,
// reference labels and definitions, a fence's info string, HTML tags, comments, processing instructions,
// declarations and CDATA. A renderer shows an image's alt text only when the image does not load, and a GFM
// renderer shows a footnote reference ("[^label]") as a number: both ways are read.

/** The parser, made at its first use (not at import: every `run` imports this, few sessions read Markdown; the
 *  bundle loads markdown-it itself then, ./markdown-parser.ts). */
let md: MarkdownIt | undefined;
const parser = (): MarkdownIt => (md ??= new (markdownIt())('commonmark', { html: true }));

/** Every syntax whose letters a CommonMark or marked (VS Code) renderer hides, with the one character it cannot
 *  be written without: a text holding none of them is shown as written (the parser is skipped). Emphasis, headings,
 *  lists, quotes, breaks, tables and strikethrough hide marks only, never a letter or digit the name check reads;
 *  character references are decoded before (shown-forms.ts). Walked one by one in test/proxy/markdown-reading.test.ts. */
export const HIDING_SYNTAXES: Readonly<Record<string, string>> = {
  'link destination and title': '[',
  'reference label and definition': '[',
  'GFM footnote label': '[',
  'image source and title, and alt text': '!',
  'HTML tag, comment, processing instruction, declaration, CDATA': '<',
  "backtick fence's info string": '`',
  "tilde fence's info string": '~',
};

/** Characters without which a text has no Markdown or HTML that hides any of it (HIDING_SYNTAXES' marks). */
const MARKS = new RegExp(`[${[...new Set(Object.values(HIDING_SYNTAXES))].map((c) => `\\${c}`).join('')}]`);

/** The parser turns U+0000 into U+FFFD; the name check's UNKNOWN (shown-forms.ts) is carried through as this. */
const NUL = /\u0000/g;
const NUL_STAND_IN = '\uE000';
const NUL_BACK = /\uE000/g;

/** An HTML block as a browser shows it: the parser's own HTML grammar (html_inline: tags, comments, processing
 *  instructions, declarations, CDATA) and references, nothing of Markdown. Not a global pattern over the block:
 *  markdown-it's tag pattern searched at every '<' costs quadratic time ('<!-- ' x 18,000: 2.3 s). */
let htmlOnly: MarkdownIt | undefined;
const htmlParser = (): MarkdownIt => (htmlOnly ??= new (markdownIt())('zero', { html: true }).enable(['html_inline', 'entity']));

/** Whether a text may render as something other than itself (holds a Markdown or HTML mark). */
export function mayRender(text: string): boolean {
  return MARKS.test(text);
}

/** A line that marked (VS Code's chat and elicitation views) takes for a link reference definition, and hides with
 *  its title (which may run over blank lines), where CommonMark (the parser here) reads text: a label over 999
 *  characters. Linear: a label holds no bracket, so each scan ends at the next one. */
const MARKED_ONLY_DEFINITION = /^ {0,3}\[(?:\\[^]|[^[\]\\]){1000,}\]:/m;

/** Whether a text holds a definition only marked hides (MARKED_ONLY_DEFINITION): no honest question or error does,
 *  and what marked hides with it cannot be read here, so the name check counts it as naming the warden. */
export function markedOnlyDefinition(text: string): boolean {
  return MARKED_ONLY_DEFINITION.test(text);
}

/** A full or collapsed reference ("[a][b]", "[a][]"): shown as written where its label is not defined, as a link
 *  where it is (a client may define labels of its own, or join messages): both are read. */
const REFERENCE = /\]\s*\[/;

/** References where every label is defined (the link's text shown, its label not). */
const EVERY_LABEL = new Proxy({}, { get: () => ({ href: '', title: '' }) });

/** Characters a text costs to read (parsed twice when it holds a reference). */
export function readingCost(text: string): number {
  return REFERENCE.test(text) ? 2 * text.length : text.length;
}

/** The text as a CommonMark renderer shows it, in each way it may (images and footnote references shown or not,
 *  reference labels defined or not): distinct readings. */
export function markdownReadings(text: string): string[] {
  const input = text.replace(NUL, NUL_STAND_IN);
  const readings = new Set<string>();
  readAll(parser().parse(input, {}), readings);
  if (REFERENCE.test(text)) readAll(parser().parse(input, { references: EVERY_LABEL }), readings);
  return [...readings];
}

function readAll(tokens: Token[], readings: Set<string>): void {
  const inline = tokens.flatMap((t) => t.children ?? []);
  const images = inline.some((t) => t.type === 'image');
  const footnotes = inline.some((t, i) => (t.type === 'link_open' && footnoteText(inline, i)) || (t.type === 'text' && t.content.includes('[^')));
  for (const alt of images ? [false, true] : [false]) {
    for (const foot of footnotes ? [false, true] : [true]) readings.add(reading(tokens, alt, foot).replace(NUL_BACK, '\u0000'));
  }
}

function reading(tokens: Token[], alt: boolean, foot: boolean): string {
  const parts: string[] = [];
  for (const t of tokens) {
    if (t.type === 'inline') inlineReading(t.children ?? [], alt, foot, parts);
    else if (t.type === 'fence' || t.type === 'code_block') parts.push(t.content);
    else if (t.type === 'html_block') htmlText(t.content, parts);
    else if (t.block && t.nesting !== 0) parts.push('\n');
  }
  return parts.join('');
}

function inlineReading(children: Token[], alt: boolean, foot: boolean, parts: string[]): void {
  let skipping = 0;
  children.forEach((t, i) => {
    if (skipping > 0) {
      if (t.type === 'link_open') skipping++;
      else if (t.type === 'link_close') skipping--;
      return;
    }
    if (t.type === 'text' && !foot) parts.push(t.content.replace(FOOTNOTE, ''));
    else if (t.type === 'text' || t.type === 'code_inline' || t.type === 'text_special') parts.push(t.content);
    else if (t.type === 'softbreak' || t.type === 'hardbreak') parts.push('\n');
    else if (t.type === 'image' && alt) inlineReading(t.children ?? [], alt, foot, parts);
    else if (t.type === 'link_open' && !foot && footnoteText(children, i)) skipping = 1;
  });
}

/** The text of an HTML block, its markup dropped (an error's: a question holding HTML is refused before). */
function htmlText(html: string, parts: string[]): void {
  for (const t of htmlParser().parseInline(html, {})) {
    for (const c of t.children ?? []) if (c.type === 'text' || c.type === 'text_special' || c.type === 'softbreak') parts.push(c.type === 'softbreak' ? '\n' : c.content);
  }
}

/** A GFM footnote reference or definition's label, which CommonMark leaves as text ("[^label]"; GFM shows a
 *  number). GFM's syntax, not CommonMark's, so the parser has no token for it. */
const FOOTNOTE = /\[\^[^\]\s]+\]/g;

/** Whether the link opened at i reads as a GFM footnote reference: its text starts with '^'. */
function footnoteText(children: Token[], i: number): boolean {
  const next = children[i + 1];
  return next !== undefined && next.type === 'text' && next.content.startsWith('^');
}
