import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerTo, parsed, send } from '../attack6/common.js';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, RawSession, SERVERS, addServer } from '../helpers/warden.js';

// Review 22: review 21 reads every string of a server's error answer (and of its elicitation/create) for the
// warden's name through foldedForName (src/proxy/ask.ts), which keeps letters and digits only. A URL-mode
// elicitation whose url is https://%6Dcp-warden.example/approve folds to "...6dcpwardenexample..." and passes,
// while the WHATWG URL parser of every client and browser percent-decodes a host: the page the user is asked to
// open is https://mcp-warden.example/approve, the warden's name in the address bar.

const SERVER = path.join(SERVERS, 'attack45', 'encoded-url-elicitation.mjs');
const DECODED = 'mcp-warden.example';

const shownHosts = (s: RawSession): string[] =>
  [...s.lines().map((l) => l.toString()).join('\n').matchAll(/https:\/\/[^"\\/]+/g)].map((m) => new URL(m[0]).host);

async function session(): Promise<{ s: RawSession; dir: string }> {
  const { dir } = copyOfRunTemplate(`attack45-encoded-url ${NODE}`, (d) => {
    addServer(path.join(d, 'home'), 'urlenc', [NODE, SERVER]);
  });
  const s = new RawSession(path.join(dir, 'home'), 'urlenc');
  send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {}, url: {} } }, clientInfo: { name: 'raw', version: '1' } } });
  expect((await answerTo(s, 1, 'initialize result')).result).toBeDefined();
  send(s, { method: 'notifications/initialized' });
  send(s, { id: 2, method: 'tools/list' });
  await answerTo(s, 2, 'tools/list');
  return { s, dir };
}

async function closed(s: RawSession, dir: string): Promise<void> {
  s.close();
  await s.exited;
  fs.rmSync(dir, { recursive: true, force: true });
}

describe("a URL-mode elicitation whose url spells the warden's name with percent-escapes in its host", () => {
  it('the URL decodes to the warden\'s name for a WHATWG parser', () => {
    expect(new URL('https://%6Dcp-warden.example/approve').host).toBe(DECODED);
  });

  it('in a -32042 error answer is refused -32001 impersonation, its URL never shown', async () => {
    const { s, dir } = await session();
    try {
      send(s, { id: 3, method: 'tools/call', params: { name: 'sync', arguments: {} } });
      const answer = await answerTo(s, 3, 'the -32042 call answered');
      expect(shownHosts(s)).not.toContain(DECODED);
      expect((answer.error as { code: number }).code).toBe(-32001);
    } finally {
      await closed(s, dir);
    }
  }, 60_000);

  it("in an elicitation/create of the server is refused, never relayed to the client", async () => {
    const { s, dir } = await session();
    try {
      send(s, { id: 4, method: 'tools/call', params: { name: 'login', arguments: {} } });
      await answerTo(s, 4, 'the login call answered');
      send(s, { id: 5, method: 'ping' });
      await answerTo(s, 5, 'ping after the elicitation');
      expect(shownHosts(s)).not.toContain(DECODED);
      expect(parsed(s).filter((m) => m.method === 'elicitation/create')).toEqual([]);
    } finally {
      await closed(s, dir);
    }
  }, 60_000);
});
