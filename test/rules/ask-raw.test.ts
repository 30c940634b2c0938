import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, launchCount, sessionLaunch, tempDir } from '../helpers/warden.js';
import { writeRules } from '../helpers/rules.js';

// The held call of an `ask` tool at the line level: the warden's question, the client's cancellation, a late
// answer, and a session that ends while the user has not answered. The server logs every line it receives
// (test/servers/two-faced.mjs, LOG_FILE), so what reaches it is known.

let dir: string;
let home: string;
let log: string;

// two-faced.mjs added with its log in the test's dir and its rules written, once; each test gets a copy
// (helpers/template-home.ts), whose log starts empty: what the server received at the lock is in the template's.
const template = homeTemplate((d, h) => {
  addServer(h, 'tf', [NODE, path.join(SERVERS, 'two-faced.mjs')], ['--env', `LOG_FILE=${path.join(d, 'received.jsonl')}`]);
  writeRules(h, 'tf', { tools: { echo: { kind: 'destructive' } } }); // destructive: ask, by default
});

beforeEach(() => {
  dir = tempDir();
  log = path.join(dir, 'received.jsonl');
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const send = (s: RawSession, msg: Record<string, unknown>): void => s.send(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
const parsed = (s: RawSession): Record<string, unknown>[] => s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>);
const received = (): string => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '');

/** A session with elicitation declared, tools listed, and a call of echo held for the user: the question. */
async function heldCall(): Promise<{ s: RawSession; question: Record<string, unknown> }> {
  const s = new RawSession(home, 'tf');
  send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
  await s.until(() => parsed(s).some((m) => m.id === 1), 'initialize result');
  send(s, { method: 'notifications/initialized' });
  send(s, { id: 2, method: 'tools/list' });
  await s.until(() => parsed(s).some((m) => m.id === 2), 'tools/list');
  send(s, { id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'held' } } });
  await s.until(() => parsed(s).some((m) => m.method === 'elicitation/create'), 'the question');
  return { s, question: parsed(s).find((m) => m.method === 'elicitation/create') as Record<string, unknown> };
}

describe('a call held for the user, line by line', () => {
  it("asks with an id of the warden's own, and forwards the call only after the answer", async () => {
    const { s, question } = await heldCall();
    expect(question.id).toMatch(/^mcp-warden-ask-[0-9a-f]{32}$/);
    expect(received()).not.toContain('"held"');
    send(s, { id: question.id, result: { action: 'accept' } });
    await s.until(() => parsed(s).some((m) => m.id === 3), 'the call answered');
    expect(received()).toContain('"held"');
    expect(received()).not.toContain(String(question.id)); // neither the question nor its answer reached the server
    s.close();
    await s.exited;
  });

  it("withdraws the question when the client cancels the call, forwards nothing, and keeps a late answer from the server", async () => {
    const { s, question } = await heldCall();
    send(s, { method: 'notifications/cancelled', params: { requestId: 3, reason: 'user gave up' } });
    await s.until(() => parsed(s).some((m) => m.method === 'notifications/cancelled'), 'the question withdrawn');
    expect((parsed(s).find((m) => m.method === 'notifications/cancelled')?.params as { requestId: unknown }).requestId).toBe(question.id);
    send(s, { id: question.id, result: { action: 'accept' } }); // too late
    send(s, { id: 4, method: 'ping' });
    await s.until(() => parsed(s).some((m) => m.id === 4), 'ping answered');
    expect(parsed(s).some((m) => m.id === 3)).toBe(false); // a cancelled request is owed no answer
    expect(received()).not.toContain('"held"');
    expect(received()).not.toContain(String(question.id));
    expect(received()).not.toContain('notifications/cancelled'); // it was never at the server
    s.close();
    await s.exited;
    expect(auditEvents(home).filter((e) => e.event === 'call_asked').pop()).toMatchObject({ tool: 'echo', answer: 'withdrawn' });
  });

  it('asks one question at a time: a second call waiting for the user is refused, saying why', async () => {
    const { s, question } = await heldCall();
    send(s, { id: 4, method: 'tools/call', params: { name: 'echo', arguments: { text: 'second' } } });
    await s.until(() => parsed(s).some((m) => m.id === 4), 'the second call answered');
    expect((parsed(s).find((m) => m.id === 4) as { error: { message: string } }).error.message).toMatch(/\(ask_unavailable\): another call is waiting for the user's answer/);
    expect(parsed(s).filter((m) => m.method === 'elicitation/create')).toHaveLength(1);
    send(s, { id: question.id, result: { action: 'accept' } });
    await s.until(() => parsed(s).some((m) => m.id === 3), 'the first call answered');
    expect(received()).toContain('"held"');
    expect(received()).not.toContain('"second"');
    s.close();
    await s.exited;
  });

  it('answers the held call with the refusal when the session ends before the user does', async () => {
    const after = launchCount(home);
    const { s } = await heldCall();
    const launch = (await sessionLaunch(home, { after })) as { pid: number };
    process.kill(launch.pid, 'SIGKILL');
    await s.until(() => parsed(s).some((m) => m.id === 3), 'the held call answered');
    const answer = parsed(s).find((m) => m.id === 3) as { error: { message: string } };
    expect(answer.error.message).toMatch(/\(ask_declined\): the session was closed before the user answered/);
    await s.exited;
  });
});
