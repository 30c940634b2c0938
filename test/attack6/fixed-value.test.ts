import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerTo, opened, parsed, recorderHome, send, type Home } from './common.js';

// A fixed value reaches the server as the operator wrote it (ADR 0022, 6). servers.json is read with JSON.parse,
// so a decimal with more digits than a double keeps (0.10000000000000000001 would arrive as 0.1, and
// 3.14159265358979323846264 as 3.141592653589793) is refused when the file is read: a server reading numbers
// exactly (Python's Decimal, a big-number library, a database column) would act on another value than the one
// reviewed. One a double holds as written reaches the server with its digits.

/** A home whose `note` tool has `text` fixed to the number as written (not as JSON.stringify would write it). */
function homeWithFixedNumber(written: string): Home {
  const h = recorderHome({ rules: { mode: 'strict', tools: { note: { kind: 'read', fixed: { text: '__EXACT__' } } } } });
  const file = path.join(h.home, 'servers.json');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"__EXACT__"', written));
  return h;
}

describe('a fixed number a double cannot hold as written', () => {
  let h: Home;
  beforeAll(() => (h = homeWithFixedNumber('0.10000000000000000001')));
  afterAll(() => h.cleanup());

  it('refuses the launch with FILE_INVALID naming the value\'s pointer, before the server starts', async () => {
    const before = h.received(); // what the server saw at enrollment
    const s = h.session();
    send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const init = await answerTo(s, 1, 'initialize answer');
    s.close();
    expect((await s.exited).code).toBe(2);
    expect(init.error).toMatchObject({ data: { code: 'FILE_INVALID', server: 'rec' }, message: expect.stringMatching(/^mcp-warden refused to launch server 'rec' \(FILE_INVALID\): /) });
    expect(s.stderr).toContain('/servers/rec/rules/tools/note/fixed/text (0.10000000000000000001)'); // the detail, for the operator
    expect(parsed(s)).toHaveLength(1);
    expect(h.received()).toBe(before);
  });
});

describe('a fixed number a double holds as written', () => {
  let h: Home;
  const WRITTEN = '0.123456789012345';
  beforeAll(() => (h = homeWithFixedNumber(WRITTEN)));
  afterAll(() => h.cleanup());

  it('reaches the server with the digits written in servers.json', async () => {
    const s = h.session();
    expect(await opened(s)).toContain('note');
    send(s, { id: 3, method: 'tools/call', params: { name: 'note', arguments: {} } });
    expect((await answerTo(s, 3)).result).toBeDefined();
    s.close();
    await s.exited;
    const calls = h.received().split('\n').filter((l) => l.includes('"tools/call"') && l.includes('"note"'));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain(`"text":${WRITTEN}`);
  });
});
