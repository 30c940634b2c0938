import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { scanSurface } from '../../src/scan/surface.js';
import { admitHandshake, type Handshake } from '../../src/surface/admit.js';
import { HANDSHAKE_FORMS, servedItems } from '../../src/supervise/surface-scan.js';

// Review 14 finding 1: the first-trust scan reads every form of the initialize result the lock takes a print of
// (capture-lock.ts: the answers to a client offering capabilities and to one offering none, and a stateless
// server's classic answers to both), each a `server` item named for its form, so no form is locked unscanned.

const TAG = String.fromCodePoint(0xe0069); // a Unicode tag character: invisible on a terminal
const form = (title: string, instructions?: string): Handshake =>
  admitHandshake(readJson(JSON.stringify({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1', title }, ...(instructions ? { instructions } : {}) })));
const clean = form('S');

describe('servedItems: what the scan reads of a fetch is every locked form of the initialize result', () => {
  it.each([
    ['bareHandshake', 1, { bareHandshake: form(`S${TAG}`) }],
    ['classic.full', 2, { classic: { full: form(`S${TAG}`), bare: clean } }],
    ['classic.bare', 3, { classic: { full: clean, bare: form(`S${TAG}`) } }],
  ] as const)('hidden text only in %s is a TAG_CHARACTERS finding on the form named for it', (_what, index, extra) => {
    const items = servedItems({ handshake: clean, tools: [], servedCatalogs: {}, ...extra });
    const findings = scanSurface('s', items).findings.filter((f) => f.code === 'TAG_CHARACTERS');
    expect(findings.map((f) => f.item)).toEqual([{ kind: 'server', name: HANDSHAKE_FORMS[index] }]);
  });

  it('a form byte-equal to one already read is read once; instructions are read once per distinct text', () => {
    const items = servedItems({ handshake: form('S', 'Use it.'), bareHandshake: form('S', 'Use it.'), classic: { full: form('S', `Use it.${TAG}`), bare: form('S', 'Use it.') }, tools: [], servedCatalogs: {} });
    expect(items.map((i) => [i.kind, i.name])).toEqual([
      ['server', ''],
      ['instructions', ''],
      ['instructions', 'classic'],
    ]);
  });
});
