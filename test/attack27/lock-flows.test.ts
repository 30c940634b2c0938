import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';
import { HOSTILE, MODERN, sdk2Home, type Sdk2Home } from './helpers.js';

// Issue 27 item 2: locks over both fetch flows as surfacelock's SPEC.md §3.4 specifies them. A stateless entry
// records protocol.flow and protocol.era and re-renders byte for byte by an independent tools.lock v1
// implementation; a version-confirmed server/discover is the commit point (no fallback after it); before it,
// the fallback to the classic flow runs on a fresh launch; a recorded flow is re-used, and only that flow.

let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

// An independent tools.lock v1 writer (SPEC.md §4): RFC 8785 for this data (object members sorted by UTF-16 code
// units; strings and integers as ES6 JSON.stringify writes them), re-indented like Go's json.Indent with two
// spaces, then one LF. It shares no code with src/.
function jcs(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
function indent(canonical: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < canonical.length; i++) {
    const c = canonical[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += canonical[++i];
      else if (c === '"') inString = false;
      continue;
    }
    const next = canonical[i + 1];
    if (c === '"') (inString = true), (out += c);
    else if (c === '{' || c === '[') {
      out += c;
      if (next !== '}' && next !== ']') out += '\n' + '  '.repeat(++depth);
      else out += next, i++;
    } else if (c === '}' || c === ']') out += '\n' + '  '.repeat(--depth) + c;
    else if (c === ',') out += ',\n' + '  '.repeat(depth);
    else if (c === ':') out += ': ';
    else out += c;
  }
  return out;
}
const sha = (s: string): string => `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;

describe('a recorded flow is re-used, and only that flow', () => {
  let h: Sdk2Home | undefined;
  afterEach(() => h?.cleanup());

  it('a classic entry of a server that now serves both eras is verified over the classic flow: no server/discover', () => {
    h = sdk2Home('classic', { entry: 'legacy-only' });
    h.scenario({ entry: 'serve' });
    h.clearLog();
    const r = cli(h.home, ['verify', 'classic']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const seen = h.received().map((m) => m.method);
    expect(seen).toContain('initialize');
    expect(seen).not.toContain('server/discover');
  });
});
