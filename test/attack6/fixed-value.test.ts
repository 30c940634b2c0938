import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerTo, parsed, recorderHome, send, type Home } from './common.js';

// A fixed value reaches the server as the operator wrote it (ADR 0022, 6). servers.json is read with JSON.parse,
// and schema.ts refuses an integer beyond 2^53 for that reason, but not a decimal with more digits than a double
// keeps: the operator writes 0.10000000000000000001 and the server receives 0.1 (and 3.14159265358979323846264
// arrives as 3.141592653589793). A server reading numbers exactly (Python's Decimal, a big-number library, a
// database column) acts on another value than the one reviewed.

let h: Home;
const WRITTEN = '0.10000000000000000001';
beforeAll(() => {
  h = recorderHome({ rules: { mode: 'strict', tools: { note: { kind: 'read', fixed: { text: '__EXACT__' } } } } });
  const file = path.join(h.home, 'servers.json');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"__EXACT__"', WRITTEN));
});
afterAll(() => h.cleanup());

describe('a fixed number', () => {
  it('reaches the server with the digits written in servers.json, or the file is refused', async () => {
    const s = h.session();
    send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const init = await answerTo(s, 1, 'initialize answer').catch(() => undefined);
    if (init?.result) {
      send(s, { method: 'notifications/initialized' });
      send(s, { id: 2, method: 'tools/list' });
      await answerTo(s, 2);
      send(s, { id: 3, method: 'tools/call', params: { name: 'note', arguments: {} } });
      await answerTo(s, 3);
    }
    s.close();
    await s.exited;
    const calls = h.received().split('\n').filter((l) => l.includes('"tools/call"') && l.includes('"note"'));
    for (const line of calls) expect(line).toContain(`"text":${WRITTEN}`);
    expect(parsed(s).length).toBeGreaterThan(0);
  });
});
