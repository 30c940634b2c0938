import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonNumber, readJson, type JsonObject, type JsonValue } from '../../src/protocol/json/reader.js';
import { ListingAdmitter, type LiveTool } from '../../src/surface/admit.js';
import { CATALOGS, CatalogAdmitter } from '../../src/surface/catalog.js';
import { tagged } from '../../src/surface/hash.js';
import { entryFor, renderToolsLock } from '../../src/surface/lockfile.js';
import { bareHandshake } from '../helpers/handshake.js';

// Every digest the admission computes, pinned to the values the code computed before the listing was made
// faster (issue 13; test/fixtures/surfaces/corpus-digests.json was written by the build of commit 92032ca and
// must never be regenerated to make a change pass). A change to the canonical bytes, to any of the tools.lock
// hashes (h_tool, h_desc, h_schema), to the warden's exact digest or to its per-field prints fails here,
// server by server. Three inputs: each corpus server's real tools; the same tools with fields added that
// exercise what real tools rarely carry (numbers a double cannot hold, keys and strings that need escaping,
// non-ASCII and astral text, "__proto__", nested descriptions); and the 1,000-tool listing the benchmark
// admits (bench/listing-cost.mjs).

interface Capture {
  id: string;
  era: string;
  tools_list_body: string;
}

const dir = path.join(import.meta.dirname, '../fixtures/surfaces');
const captures = fs
  .readFileSync(path.join(dir, 'corpus.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Capture);
const pinned = JSON.parse(fs.readFileSync(path.join(dir, 'corpus-digests.json'), 'utf8')) as Record<string, string>;

const num = (l: string): JsonNumber => new JsonNumber(l);

/** The tool with fields added after its own (and inside its inputSchema), deterministic per tool. */
function harder(tool: JsonObject, i: number): JsonObject {
  const t = new Map(tool);
  t.set(`x-Ünïcode "key" ${i}`, `line\nbreak \u2028 \ud83d\ude00 tab\t ctl\u0001\u001f quote" back\\ é ${'\u00ff'.repeat(i % 3)} /`);
  t.set('__proto__', [num('9007199254740993'), num('1.50E+1'), num('-0'), num('0.1e-400'), num('123456789012345678901234567890'), num('5e-324'), num('-1.0e-7'), num(String(i))]);
  t.set('Z', new Map<string, JsonValue>([['description', `nested prompt ${i}`], ['b', true], ['a', null], ['', []], ['\u0000', new Map()]]));
  t.set('a\u007f', new Map<string, JsonValue>([['description', new Map([['description', 'two deep']])], ['list', [new Map([['description', 'in a list']]), 'x', false]]]));
  const schema = t.get('inputSchema');
  if (schema instanceof Map) {
    const s = new Map(schema);
    s.set('maximum', num('9007199254740993'));
    s.set('x-€', new Map<string, JsonValue>([['description', 'schema prompt \ud800\udc00'], ['default', num('1e21')], ['min', num('0.000001')]]));
    t.set('inputSchema', s);
  }
  return t;
}

/** Everything the admission computes for one tool, plus its digest as a prompts/list item. */
function record(t: LiveTool): unknown {
  const catalog = new CatalogAdmitter(CATALOGS[0] as (typeof CATALOGS)[0], { maxPages: 1, maxTools: 10, maxToolBytes: 1 << 20, maxSurfaceBytes: 1 << 24, maxInstructionsBytes: 1 << 16, maxCursorBytes: 4096 });
  catalog.page(new Map([['prompts', [t.value]]]));
  return { name: t.name, canonical: tagged(t.canonical), hTool: t.hTool, hExact: t.hExact, hDesc: t.hDesc, hSchema: t.hSchema, print: t.print, asPrompt: Object.values(catalog.items) };
}

/** One digest over every record of a listing, and over the tools.lock entry it renders to. */
function digestOf(era: string, tools: JsonValue[]): string {
  const admitter = new ListingAdmitter();
  admitter.page(new Map([['tools', tools]]));
  const lock = renderToolsLock(new Map([['server', entryFor('server', [], era, bareHandshake(era), admitter.tools)]]));
  const text = JSON.stringify({ tools: admitter.tools.map(record), lock });
  return createHash('sha256').update(text).digest('hex');
}

function toolsOf(c: Capture): JsonObject[] {
  const body = readJson(c.tools_list_body) as JsonObject;
  return ((body.get('result') as JsonObject).get('tools') as JsonObject[]).slice();
}

describe('the digests of real surfaces are pinned', () => {
  it.each(captures.map((c) => [c.id, c] as const))('%s: its tools as served', (id, c) => {
    expect(digestOf(c.era, toolsOf(c))).toBe(pinned[id]);
  });

  it.each(captures.map((c) => [c.id, c] as const))('%s: its tools with hard fields added', (id, c) => {
    expect(digestOf(c.era, toolsOf(c).map(harder))).toBe(pinned[`${id} (harder)`]);
  });

  it('the 1,000-tool listing of bench/listing-cost.mjs', () => {
    const real = captures.flatMap((c) => (JSON.parse(c.tools_list_body) as { result: { tools: Record<string, unknown>[] } }).result.tools);
    const tools = Array.from({ length: 1000 }, (_, i) => ({ ...real[i % real.length], name: `tool_${i}` }));
    const listing = readJson(Buffer.from(JSON.stringify({ tools })), { maxBytes: 64 << 20, maxDepth: 64 }) as JsonObject;
    expect(digestOf('2025-06-18', listing.get('tools') as JsonValue[])).toBe(pinned['listing of 1,000']);
  });

  it('covers every server', () => {
    expect(Object.keys(pinned)).toHaveLength(2 * captures.length + 1);
  });
});
