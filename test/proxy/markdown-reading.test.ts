import { describe, expect, it } from 'vitest';
import { errorImpersonation, namesWarden, questionImpersonation } from '../../dist/proxy/ask.js';
import { HIDING_SYNTAXES, mayRender } from '../../dist/proxy/markdown-reading.js';

// Review 24: the name check reads Markdown from a CommonMark parser's tokens (src/proxy/markdown-reading.ts), each
// way renderers differ, within a budget of parsed characters; an input request's two values share one bound.

const message = (text: string): Map<string, unknown> => new Map<string, unknown>([['mode', 'form'], ['message', text]]);

describe('the Markdown reading of the name check', () => {
  it('reads an image alt text, a footnote reference and a reference label both shown and not', () => {
    for (const text of [
      'mc![zz](i.png)p-warden', // alt not shown (the image loads)
      'mc![p](i.png)-warden', // alt shown (it does not)
      'mc[^zz]p-warden\n\n[^zz]: a note', // a GFM footnote reference shows a number
      'mc[](zz)p-war[d][en]', // [en] undefined: shown as written
      'mc[][x]p-warden', // [x] defined by the client: the label is not shown
      '```zz\nmcp-warden\n```', // a fence's content is shown
      'mc\n```zz\n```\np-warden',
    ]) {
      expect(namesWarden(text), text).toBe(true);
    }
    expect(namesWarden('See [the docs][1] and ![a chart](c.png).\n\n[1]: https://example.com/')).toBe(false);
  });

  it('walks every syntax whose letters a renderer hides: each joins "mc" and "p-warden" only as shown, and its mark alone makes the text parsed', () => {
    // One text per syntax of HIDING_SYNTAXES: letters hidden between the halves of the name (a syntax added there
    // without a text here fails).
    const hiding: Record<string, string> = {
      'link destination and title': 'mc[](zz "zz")p-warden',
      'reference label and definition': 'mc[][zz]p-warden\n\n[zz]: /u',
      'GFM footnote label': 'mc[^zz]p-warden\n\n[^zz]: a note',
      'image source and title, and alt text': 'mc![zz](zz "zz")p-warden',
      'HTML tag, comment, processing instruction, declaration, CDATA': 'mc<zz>p-warden',
      "backtick fence's info string": 'mc\n```zz\n```\np-warden',
      "tilde fence's info string": 'mc\n~~~zz\n~~~\np-warden',
    };
    expect(Object.keys(hiding).sort()).toEqual(Object.keys(HIDING_SYNTAXES).sort());
    for (const [syntax, text] of Object.entries(hiding)) {
      const mark = HIDING_SYNTAXES[syntax] as string;
      expect(text.includes(mark) && !text.includes('mcp-warden'), syntax).toBe(true);
      expect(namesWarden(text), syntax).toBe(true);
      expect(mayRender(`plain ${mark} text`), syntax).toBe(true);
    }
    expect(mayRender('mc*zz*p-warden ~~x~~ # h > q')).toBe(true); // '~' (strikethrough shows its letters)
    expect(mayRender('mc*zz*p-warden _x_ # h > q 1. l')).toBe(false);
  });

  it('refuses a question holding more than 96 KiB of text to read as Markdown as too large, not parsed past it', () => {
    expect(questionImpersonation(message('['.repeat(95 * 1024)))).toBeUndefined();
    expect(questionImpersonation(message('['.repeat(97 * 1024)))).toBe('too_large');
    expect(questionImpersonation(message('a'.repeat(250 * 1024)))).toBeUndefined();
  });

  it("walks an input request's inputRequests and requestState under one bound, and reads requestState for the name but not for HTML", () => {
    const half = 'a'.repeat(150 * 1024);
    expect(questionImpersonation(new Map([['q', message(half)]]), undefined)).toBeUndefined();
    expect(questionImpersonation(new Map([['q', message(half)]]), half)).toBe('too_large');
    expect(questionImpersonation(new Map([['q', message('Pick one')]]), 'state <b>x</b>')).toBeUndefined();
    expect(questionImpersonation(new Map([['q', message('Pick <b>one</b>')]]), 'state')).toBe('markup');
    expect(questionImpersonation(new Map([['q', message('Pick one')]]), 'mc[](x)p-warden')).toBe('worded');
  });

  it("reads an error's HTML block as a browser shows its text (tags, comments and attributes dropped), in linear time", () => {
    const error = (text: string): Map<string, unknown> => new Map<string, unknown>([['code', -32000], ['message', text]]);
    expect(errorImpersonation(error('<div>\nmc<span title=">zz">p-</span>war<!-- zz -->den\n</div>'))).toBe('worded');
    expect(errorImpersonation(error('TypeError: x\n    at f (<anonymous>)'))).toBeUndefined();
    // markdown-it's tag pattern searched at every '<' was quadratic here (2.3 s of CPU); its inline parser is not.
    const before = process.cpuUsage();
    expect(errorImpersonation(error(`<div>\n${'<!-- '.repeat(18000)}`))).toBeUndefined();
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(500);
  });
});
