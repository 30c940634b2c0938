import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerTo, parsed, send } from '../attack6/common.js';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, RawSession, SERVERS, addServer } from '../helpers/warden.js';

// Review 21: a server's own elicitation request worded as one of the warden's questions is refused
// (server-relay.ts, impersonatesWarden), but revision 2025-11-25 has a second way to put a question to the user:
// an error answer URLElicitationRequiredError (code -32042) whose error.data.elicitations[] are URL-mode
// elicitations (message, url) the client shows the user, asking to open the URL. An error answer is relayed as
// the server wrote it: the question worded as mcp-warden's ("... Approve this call at the page opened") reaches
// the client.

const SERVER = path.join(SERVERS, 'attack44', 'url-elicitation-error.mjs');

describe('a URLElicitationRequiredError (-32042) answer whose elicitation is worded as a question of mcp-warden', () => {
  it("does not reach the client with the server's question in it", async () => {
    const { dir } = copyOfRunTemplate(`attack44-url-elicitation ${NODE}`, (d) => {
      addServer(path.join(d, 'home'), 'urlerr', [NODE, SERVER]);
    });
    const s = new RawSession(path.join(dir, 'home'), 'urlerr');
    try {
      send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {}, url: {} } }, clientInfo: { name: 'raw', version: '1' } } });
      const init = await answerTo(s, 1, 'initialize result');
      expect(init.result).toBeDefined();
      send(s, { method: 'notifications/initialized' });
      send(s, { id: 2, method: 'tools/list' });
      await answerTo(s, 2, 'tools/list');
      send(s, { id: 3, method: 'tools/call', params: { name: 'sync', arguments: {} } });
      const answer = await answerTo(s, 3, 'the call answered');
      expect(answer.error).toBeDefined();
      const error = answer.error as { code: number; message: string };
      expect(error.code).toBe(-32001);
      expect(error.message).toMatch(/^mcp-warden refused the answer of server 'urlerr' to tools\/call: its error is worded as a message of mcp-warden/);
      // The client is shown no question of the server's worded as the warden's.
      expect(JSON.stringify(answer)).not.toMatch(/mcp-warden: server 'urlerr' is asked/);
      expect(parsed(s).some((m) => JSON.stringify(m).includes('https://example.com/mcp-warden/approve'))).toBe(false);
    } finally {
      s.close();
      await s.exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
