import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { admitHandshake, ListingAdmitter } from '../../src/surface/admit.js';
import { diffSurface } from '../../src/surface/diff.js';
import { entryFor, parseToolsLock, renderToolsLock } from '../../src/surface/lockfile.js';
import { bareHandshake } from '../helpers/handshake.js';

// 36 real servers' tools/list bytes (test/fixtures/surfaces/README.md): each locks, renders, re-parses as a
// self-consistent lockfile, and compares as matched against itself (no false drift on real shapes).

interface Capture {
  id: string;
  era: string;
  initialize_body: string | null;
  tools_list_body: string;
}

const captures = fs
  .readFileSync(path.join(import.meta.dirname, '../fixtures/surfaces/corpus.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Capture);

function surfaceOf(c: Capture) {
  const body = readJson(c.tools_list_body) as Map<string, unknown>;
  const admitter = new ListingAdmitter();
  admitter.page(body.get('result') as never);
  const init = c.initialize_body ? ((readJson(c.initialize_body) as Map<string, unknown>).get('result') as never) : undefined;
  const hs = init ? admitHandshake(init) : bareHandshake(c.era);
  return { hs, tools: admitter.tools };
}

describe('the corpus of real surfaces', () => {
  it('holds 36 servers and 363 tools', () => {
    expect(captures).toHaveLength(36);
    expect(captures.reduce((n, c) => n + surfaceOf(c).tools.length, 0)).toBe(363);
  });

  it.each(captures.map((c) => [c.id, c] as const))('%s locks, round-trips and matches itself', (_id, c) => {
    const surface = surfaceOf(c);
    const entry = entryFor('server', [], c.era, surface.hs, surface.tools);
    const text = renderToolsLock(new Map([[c.id, entry]]));
    const back = parseToolsLock(text).get(c.id);
    expect(renderToolsLock(new Map([[c.id, back as typeof entry]]))).toBe(text);
    const diff = diffSurface(back as typeof entry, undefined, surface.hs, surface.tools);
    expect(diff.tools.filter((t) => t.state !== 'matched')).toEqual([]);
    expect(diff.instructionsChanged).toBe(false);
  });
});
