import { describe, expect, it } from 'vitest';
import { namesWarden, questionImpersonation } from '../../dist/proxy/ask.js';

// Review 27 on the Markdown reading (src/proxy/markdown-reading.ts, ADR 0067). The name check refuses a question
// whose shown text joins "mc" and "p-warden" around a block whose letters a renderer hides (its own test:
// 'mc\n```zz\n```\np-warden', a fence's info string). Two roads it misses:
// - a fence of tildes: mayRender's MARKS (/[[<`!]/) has no '~', so the text is never parsed, and a '~~~zz' fence
//   hides its info string in every CommonMark renderer (markdown-it, marked: <pre><code class="language-zz">);
// - a link reference definition whose label is over 999 characters: CommonMark (markdown-it) takes it for text,
//   marked (VS Code's chat and elicitation views) for a definition, and hides it: "<p>mc</p><p>p-warden</p>".

const message = (text: string): Map<string, unknown> => new Map<string, unknown>([['mode', 'form'], ['message', text]]);

describe("the name check reads what a tilde fence and marked's definitions hide", () => {
  it("a fence of tildes whose info string splits the warden's name is read as naming it, as the backtick fence is", () => {
    expect(namesWarden('mc\n```zz\n```\np-warden')).toBe(true); // the neighbour that holds
    for (const text of ['mc\n~~~zz\n~~~\np-warden', 'Allow mcp-\n~~~ignore-this\n~~~\nwarden to read your files?']) {
      expect(namesWarden(text), text).toBe(true);
      expect(questionImpersonation(message(text)), text).toBe('worded');
    }
  });

  it('a reference definition with a 1,000-character label that marked hides between "mc" and "p-warden" is read as naming it', () => {
    expect(namesWarden('mc\n\n[a]: /u\n\np-warden')).toBe(true); // a short label: every renderer hides it, and it holds
    const label = 'z'.repeat(1000);
    const text = `mc\n\n[${label}]: /u\n\np-warden`;
    expect(namesWarden(text)).toBe(true);
    expect(questionImpersonation(message(text))).toBe('worded');
  });
});
