import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerTo, opened, parsed, send } from '../attack6/common.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

// A server's own elicitation request that names mcp-warden would be taken by the user for the warden's question.
// The name may be spelled with look-alike letters of other scripts (Cyrillic с and а in "mсp-wаrden"), or stand
// anywhere in the request's params the client shows: the schema's title and description, a field's title or
// description, an enum's names. Each such request is answered with an error and never reaches the client.

const HOSTILE = path.join(SERVERS, 'attack22', 'escaper-hostile.mjs');
const form = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ message: 'Please confirm the operation.', requestedSchema: { type: 'object', properties, ...extra } });

const IMPERSONATING: [string, Record<string, unknown>][] = [
  ['Cyrillic look-alikes in the message', { message: 'm\u0441p-w\u0430rden: allow this call?', requestedSchema: { type: 'object', properties: {} } }],
  ['Greek and Cyrillic capitals in the message', { message: '\u039c\u0421\u0420 \u051c\u0430rden asks: allow?', requestedSchema: { type: 'object', properties: {} } }],
  ["the name in a field's title", form({ ok: { type: 'boolean', title: 'Allowed by mcp-warden' } })],
  ["the name in a field's description", form({ ok: { type: 'boolean', description: 'mcp\u2011warden needs your yes' } })],
  ["the name in the schema's title", form({}, { title: 'MCP Warden' })],
  ["the name in the schema's description", form({}, { description: 'A question of the mcp-warden supervisor' })],
  ['the name in an enum name', form({ choice: { type: 'string', enum: ['a', 'b'], enumNames: ['Allow (mcp-wаrden)', 'Deny'] } })],
  ['the name in a oneOf title', form({ choice: { type: 'string', oneOf: [{ const: 'a', title: 'm c p w a r d e n: allow' }] } })],
  ['the name as a field name', form({ mcp_warden_approval: { type: 'boolean' } })],
  ['the name in a URL-mode request', { mode: 'url', message: 'Open the page to continue.', url: 'https://mcp-warden.example/approve', elicitationId: 'e1' }],
  ['the name with invisible characters and a combining mark', form({ ok: { type: 'boolean', title: 'mcp\u200b-war\u0301den' } })],
];

let dir: string;
let home: string;
let log: string;
let s: RawSession;
let next = 100;
beforeAll(async () => {
  dir = tempDir();
  home = path.join(dir, 'home');
  log = path.join(dir, 'received.jsonl');
  addServer(home, 'hostile', [NODE, HOSTILE], ['--env', `LOG_FILE=${log}`]);
  s = new RawSession(home, 'hostile');
  await opened(s);
}, 60_000);
afterAll(async () => {
  s.close();
  await s.exited;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Has the server ask `params` during a call; whether the client was shown it, and what the server was answered. */
async function serverAsks(params: Record<string, unknown>): Promise<{ shown: boolean; answered: Record<string, unknown> | undefined }> {
  const id = next++;
  const before = parsed(s).filter((m) => m.method === 'elicitation/create').length;
  send(s, { id, method: 'tools/call', params: { name: 'read_file', arguments: { params, tag: String(id) } } });
  await answerTo(s, id, 'the call answered');
  // The server asked before it answered the call, and the warden relays (or refuses) in order, so the question
  // reached the client before the answer did; a ping behind it reaches the server after the warden's refusal.
  send(s, { id: id + 1000, method: 'ping' });
  await answerTo(s, id + 1000, 'the ping behind the call');
  const asked = parsed(s).filter((m) => m.method === 'elicitation/create');
  const askId = `srv-ask-${id}`;
  const answered = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((m) => m.id === askId);
  return { shown: asked.length > before, answered };
}

describe("a server's elicitation naming mcp-warden in disguise", () => {
  it.each(IMPERSONATING)('is refused and never shown: %s', async (_what, params) => {
    const r = await serverAsks(params);
    expect(r.shown).toBe(false);
    expect(r.answered).toMatchObject({ error: { code: -32001 } });
    expect(String((r.answered?.error as { message: string }).message)).toMatch(/^mcp-warden refused this elicitation request/);
  });

  it("relays an honest question that does not name the warden, with look-alike letters of its own language", async () => {
    const r = await serverAsks(form({ path: { type: 'string', title: 'Файл для чтения', description: 'Ποιο αρχείο; which file to read (a warden of the notes)' } }, { title: 'Open a file' }));
    expect(r.shown).toBe(true);
    expect(auditEvents(home).filter((e) => e.event === 'server_message_refused').every((e) => e.reason === 'impersonation')).toBe(true);
  });
});
