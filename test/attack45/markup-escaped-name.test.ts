import { describe, expect, it } from 'vitest';
import { errorImpersonation, impersonatesWarden } from '../../dist/proxy/ask.js';

// Review 22: foldedForName (src/proxy/ask.ts) drops every character that is not a letter or a digit, so it reads
// the warden's name through look-alikes, case and separators, but not through an escape its reader undoes: a
// client that renders an elicitation's message as Markdown (VS Code shows it as a MarkdownString; markdown-it
// decodes character references) shows "&#109;cp-warden" and "mcp&#x2D;warden" as "mcp-warden", and a URL's host
// is percent-decoded by every WHATWG parser. The fold reads "109cpwarden" and "mcpx2dwarden".

const m = (o: Record<string, unknown>): Map<string, unknown> => new Map(Object.entries(o));

describe('a question naming the warden through an escape its reader undoes', () => {
  it('is an elicitation request worded as the warden\'s (character references in the message)', () => {
    for (const message of ['&#109;cp-warden: approve this call', 'mcp&#x2D;warden: approve this call', 'MCP&#8209;Warden asks: approve']) {
      expect(impersonatesWarden(m({ mode: 'form', message, requestedSchema: m({ type: 'object', properties: m({}) }) })), message).toBe(true);
    }
  });

  it('is an elicitation request worded as the warden\'s (the name written backwards under a right-to-left override)', () => {
    // U+202E RIGHT-TO-LEFT OVERRIDE ... U+202C: a bidi-aware renderer (Electron, a browser, VS Code) lays
    // "nedraw-pcm" out right to left, so the user reads "mcp-warden"; the fold drops the controls and reads
    // "nedrawpcm".
    const message = 'Approve this call: \u202Enedraw-pcm\u202C asks.';
    expect(impersonatesWarden(m({ mode: 'form', message, requestedSchema: m({ type: 'object', properties: m({}) }) }))).toBe(true);
  });

  it('is an error answer worded as the warden\'s (a -32042 url whose host is percent-encoded)', () => {
    const url = 'https://%6Dcp-warden.example/approve';
    expect(new URL(url).host).toBe('mcp-warden.example');
    const error = m({ code: -32042, message: 'More information needed.', data: m({ elicitations: [m({ mode: 'url', elicitationId: 'e1', message: 'Approve this call at the page opened.', url })] }) });
    expect(errorImpersonation(error)).toBe('worded');
  });
});
