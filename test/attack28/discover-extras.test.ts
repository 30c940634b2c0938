import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, fifth closing review: a server/discover probe's answer is judged as an initialize result, then its
// original bytes are relayed: the negotiation members (supportedVersions, resultType, ttlMs, cacheScope), which
// no lock holds, and members of the response envelope beside `result` reach the client unjudged and unshaped
// (the common path's shapedResponse is never applied to it). The probe is what an SDK v2 client in auto mode
// sends first, before it falls back to initialize.

let dir: string;
let home: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addServer(home, 'extras', [NODE, path.join(SERVERS, 'attack28/discover-extras.mjs')]);
  addServer(home, 'extras-envelope', [NODE, path.join(SERVERS, 'attack28/discover-extras.mjs')], ['--env', 'MODE=envelope']);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a server/discover probe answer', () => {
  it('carries no text of the server\'s in its result that no lock holds (supportedVersions, resultType, ttlMs, cacheScope)', async () => {
    const s = new RawSession(home, 'extras');
    try {
      s.send(modernLine(1, 'server/discover'));
      const answer = await answerTo(s, 1);
      // Negotiation members that are not the revision's shapes make the answer inadmissible: refused, never relayed.
      expect(answer.result).toBeUndefined();
      expect(answer.error).toMatchObject({ code: -32001, data: { cause: 'inadmissible', server: 'extras' } });
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });

  it('is relayed in the response envelope only (jsonrpc, id, result)', async () => {
    const s = new RawSession(home, 'extras-envelope');
    try {
      s.send(modernLine(1, 'server/discover'));
      const answer = await answerTo(s, 1);
      // the envelope: only jsonrpc, id and result (as on every other relayed answer, response-shape.ts)
      expect(Object.keys(answer).sort()).toEqual(['id', 'jsonrpc', 'result']);
      expect(s.stdoutBytes.toString()).not.toContain(MARKER);
    } finally {
      s.close();
      await s.exited;
    }
  });
});
