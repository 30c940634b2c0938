import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, INITIALIZE, tempDir } from '../helpers/warden.js';

// Odd answer forms from a hostile server (test/servers/attack-hostile.mjs, scenario `form`), and a client
// notification that names a tool. Each form is held: refused, or closed before the client sees a byte of it.

const POISON = 'attacker.example';
let dir: string;
let home: string;
let scenarioFile: string;
let logFile: string;
const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));

// attack-hostile.mjs added with its scenario and log in the test's dir, once; each test gets a copy (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  fs.writeFileSync(path.join(d, 'scenario.json'), JSON.stringify({}));
  addServer(h, 'hx', [NODE, path.join(SERVERS, 'attack-hostile.mjs')], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`, '--env', `LOG_FILE=${path.join(d, 'received.log')}`]);
});

beforeEach(() => {
  dir = tempDir();
  scenarioFile = path.join(dir, 'scenario.json');
  logFile = path.join(dir, 'received.log');
  serve({});
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Initializes, lists once and closes; fails unless the initialize result and the client's listing were both answered. */
async function listOnce(): Promise<RawSession> {
  const s = new RawSession(home, 'hx');
  s.send(INITIALIZE + '\n');
  await s.until(() => s.lines().some((l) => /"id":1,"result"/.test(l.toString())), 'initialize result', 15_000);
  s.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
  await s.until(() => s.lines().some((l) => { const m = JSON.parse(l.toString()); return m.id === 2 && m.method === undefined; }), 'listing answered', 15_000);
  s.close();
  await s.exited;
  return s;
}

/** Initializes and returns the session once the warden exited, with its answer to the initialize. */
async function refusedAtHandshake(): Promise<{ s: RawSession; answer: Record<string, unknown>; code: number | null }> {
  const s = new RawSession(home, 'hx');
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  s.close();
  const { code } = await s.exited;
  return { s, answer, code };
}

describe('attack: answer forms (held)', () => {
  it('a duplicate "id" written as an escape ("\\u0069d") is inadmissible: the session closes at the handshake, nothing forwarded', async () => {
    serve({ form: 'dupEscapedId' });
    const { s, answer, code } = await refusedAtHandshake();
    expect(code).toBe(5);
    // The key is the server's: the client is told the kind in the warden's words, the warden's stderr which key.
    expect(answer.error).toMatchObject({ data: { cause: 'inadmissible' }, message: expect.stringMatching(/duplicate_key: a member named twice/) });
    expect(s.stderr).toMatch(/duplicate_key: duplicate key "id"/);
    expect(s.stdoutBytes.toString()).not.toContain(POISON);
    expect(auditEvents(home).some((e) => e.event === 'exit')).toBe(true);
  });

  for (const form of ['nestedId', 'idNull'] as const) {
    it(`an answer of form ${form} is refused and the client gets the true listing`, async () => {
      serve({ form });
      const s = await listOnce();
      expect(s.stdoutBytes.toString()).not.toContain(POISON);
      const listing = s.lines().map((l) => JSON.parse(l.toString())).find((m) => m.id === 2);
      expect(listing).toMatchObject({ result: { tools: [{ name: 'echo', description: 'Echoes its text.' }] } });
      expect(auditEvents(home).some((e) => e.event === 'server_message_refused' && e.reason === 'unmatched_id')).toBe(true);
    });
  }

  it('an answer carrying both an error and a poisoned result is read as the error: the handshake is refused, nothing of the result forwarded', async () => {
    serve({ form: 'resultAndError' });
    const { s, answer, code } = await refusedAtHandshake();
    expect(code).toBe(3);
    expect(answer.error).toMatchObject({ data: { cause: 'protocol_error' }, message: expect.stringMatching(/answered tools\/list with an error/) });
    expect(s.stdoutBytes.toString()).not.toContain(POISON);
  });

  const inadmissible = [
    ['requestResponse', 'a line with both a method and a result', /cannot be read unambiguously \(ambiguous/],
    ['bareCr', 'a listing with a bare carriage return between its tokens (another answer to a client reading universal newlines)', /cannot be read unambiguously \(ambiguous: a carriage return/],
  ] as const;
  for (const [form, what, why] of inadmissible) {
    it(`${what} closes the session as inadmissible, before the client sees a byte of it`, async () => {
      serve({ form });
      const s = new RawSession(home, 'hx');
      s.send(INITIALIZE + '\n');
      const answer = await s.message(1);
      s.close();
      expect((await s.exited).code).toBe(5);
      expect(answer.error).toMatchObject({ data: { cause: 'inadmissible' }, message: expect.stringMatching(why) });
      expect(s.lines()).toHaveLength(1);
      expect(s.stdoutBytes.toString()).not.toContain(POISON);
    });
  }
});

describe('attack: a request sent as a notification', () => {
  it('a tools/call sent as a notification (no id) for a tool that is not approved never reaches the server', async () => {
    const s = new RawSession(home, 'hx');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_everything","arguments":{}}}\n');
    s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await s.until(() => s.lines().some((l) => JSON.parse(l.toString()).id === 3), 'ping answered');
    s.close();
    await s.exited;
    const received = fs.readFileSync(logFile, 'utf8');
    expect(received).toContain('"method":"ping"'); // the server saw what came after the notification
    expect(received).not.toContain('delete_everything');
  });
});
