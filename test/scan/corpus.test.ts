import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanSurface, type Neighbour, type ScanItem } from '../../src/scan/surface.js';

// The 36 real surfaces of test/fixtures/surfaces/corpus.jsonl (reference servers, popular npm and Python servers)
// must scan clean: the rules are calibrated against what real servers say. Enrolled together, the only findings
// are the tool names two real servers share (they would shadow each other in one client).

interface Surface {
  id: string;
  items: ScanItem[];
  tools: string[];
}

const CORPUS = path.join(import.meta.dirname, '..', 'fixtures', 'surfaces', 'corpus.jsonl');
const surfaces: Surface[] = fs
  .readFileSync(CORPUS, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const rec = JSON.parse(line) as { id: string; initialize_body: string | null; tools_list_body: string };
    const tools = ((JSON.parse(rec.tools_list_body) as { result?: { tools?: { name: string }[] } }).result?.tools ?? []);
    const instructions = rec.initialize_body ? (JSON.parse(rec.initialize_body) as { result?: { instructions?: string } }).result?.instructions : undefined;
    const items: ScanItem[] = tools.map((t) => ({ kind: 'tool', name: t.name, value: t }));
    if (instructions !== undefined) items.push({ kind: 'instructions', name: '', value: instructions });
    return { id: rec.id, items, tools: tools.map((t) => t.name) };
  });

describe('the scan of 36 real surfaces', () => {
  it('reads the whole corpus (363 tools)', () => {
    expect(surfaces).toHaveLength(36);
    expect(surfaces.reduce((n, s) => n + s.tools.length, 0)).toBe(363);
  });

  it.each(surfaces.map((s) => [s.id, s] as const))('%s scans clean on its own', (_id, s) => {
    expect(scanSurface(s.id, s.items).findings).toEqual([]);
  });

  it('enrolled together, finds only the tool names real servers share', () => {
    const pairs = new Set<string>();
    for (const s of surfaces) {
      const neighbours: Neighbour[] = surfaces.filter((o) => o.id !== s.id).map((o) => ({ server: o.id, tools: o.tools }));
      for (const f of scanSurface(s.id, s.items, neighbours).findings) {
        expect(f.code).toBe('SHADOW_NAME');
        pairs.add(`${s.id}:${f.item.name}`);
      }
    }
    // filesystem and desktop-commander (read_file, write_file, ...), github and gitlab, excel and sqlite.
    expect([...pairs].map((p) => p.split(':')[0]).filter((v, i, a) => a.indexOf(v) === i).sort()).toEqual(['py-excel', 'py-sqlite', 'ref-filesystem', 'ref-github', 'ref-gitlab', 'tp-desktop-cmd']);
  });
});
