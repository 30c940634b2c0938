import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { NODE, RawSession, SERVERS, addServer, auditEvents, cli, connectClient, tempDir, INITIALIZE } from '../helpers/warden.js';

// A server that answers the warden's own requests honestly and the client's with something else
// (test/servers/two-faced.mjs). Nothing it sends may reach the client unless it is the answer, id lexeme for
// lexeme, to one waiting request of the client's; and it must have no way to tell whose a request is.

const POISON = 'attacker.example';
let dir: string;
let home: string;
let scenarioFile: string;
let logFile: string;
let callLog: string;

const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));

// two-faced.mjs added with its scenario and logs in the test's dir, once; each test gets a copy (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  fs.writeFileSync(path.join(d, 'scenario.json'), JSON.stringify({}));
  addServer(h, 'tf', [NODE, path.join(SERVERS, 'two-faced.mjs')], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`, '--env', `LOG_FILE=${path.join(d, 'received.log')}`, '--env', `CALL_LOG=${path.join(d, 'calls.log')}`]);
});

beforeEach(() => {
  dir = tempDir();
  scenarioFile = path.join(dir, 'scenario.json');
  logFile = path.join(dir, 'received.log');
  callLog = path.join(dir, 'calls.log');
  serve({});
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const refusals = (): Record<string, unknown>[] => auditEvents(home).filter((e) => e.event === 'server_message_refused');

describe('answers the warden does not judge are never forwarded', () => {
  for (const [forge, poison] of [['string', 'description'], ['float', 'description'], ['exponent', 'description'], ['string', 'hint'], ['float', 'hint'], ['unknown', 'description']] as const) {
    it(`an SDK client never sees a ${poison} poisoned under an id of form "${forge}", only the true answer`, async () => {
      serve({ forge, poison });
      const { client } = await connectClient(home, 'tf');
      const { tools } = await client.listTools();
      await client.close();
      expect(tools).toHaveLength(1);
      expect(tools[0]?.description).toBe('Echoes its text.');
      expect(tools[0]?.annotations).toBeUndefined();
      // The warden's own listing at the handshake got the forgery too: the server cannot tell it apart.
      expect(refusals().length).toBeGreaterThanOrEqual(1);
      expect(refusals().every((e) => e.server === 'tf' && e.reason === 'unmatched_id')).toBe(true);
    });
  }

  it('does not forward a batch from the server, and the client gets the true answer', async () => {
    serve({ forge: 'batch' });
    const s = new RawSession(home, 'tf');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
    const listing = await s.message(2);
    s.close();
    await s.exited;
    expect(listing).toMatchObject({ id: 2, result: { tools: [{ name: 'echo', description: 'Echoes its text.' }] } });
    expect(s.stdoutBytes.toString()).not.toContain(POISON);
    expect(s.lines().some((l) => l[0] === 0x5b)).toBe(false);
    expect(refusals().length).toBeGreaterThanOrEqual(1);
    expect(refusals().every((e) => e.reason === 'batch')).toBe(true);
    expect(s.stderr).toMatch(/sent a JSON-RPC batch of 1 element\(s\); not forwarded/);
    expect(s.stderr).toMatch(/^mcp-warden ALERT server_message_refused server=tf reason=batch/m);
  });

  it('does not forward a second answer to a request already answered', async () => {
    serve({ forge: 'twice' });
    const s = new RawSession(home, 'tf');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
    await s.message(2);
    // A ping after it: its answer is written after the second answer, so once it is here, the second was judged.
    s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await s.until(() => s.lines().some((l) => JSON.parse(l.toString()).id === 3), 'the ping answered');
    s.close();
    await s.exited;
    expect(s.stdoutBytes.toString()).not.toContain(POISON);
    expect(s.lines().filter((l) => JSON.parse(l.toString()).id === 2)).toHaveLength(1);
    expect(refusals().length).toBeGreaterThanOrEqual(1);
    expect(refusals().every((e) => e.reason === 'unmatched_id')).toBe(true);
  });

  it('answers a client batch with an error for each request and never runs a hidden tool from it', async () => {
    serve({ drift: true }); // echo's description drifted: enforce hides it and refuses calls to it
    const s = new RawSession(home, 'tf');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}\n');
    expect((await s.message(2)).error).toMatchObject({ code: -32001, message: expect.stringMatching(/refused the call to tool "echo"/) });
    s.send('[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}},{"jsonrpc":"2.0","method":"notifications/progress","params":{}}]\n');
    const batch = (await s.message(3)) as unknown;
    s.close();
    await s.exited;
    expect(batch).toEqual([{ jsonrpc: '2.0', id: 3, error: { code: -32600, message: expect.stringMatching(/batches are not relayed/) } }]);
    expect(fs.existsSync(callLog) ? fs.readFileSync(callLog, 'utf8') : '').toBe('');
    expect(fs.readFileSync(logFile, 'utf8')).not.toMatch(/^\[/m);
    expect(auditEvents(home).find((e) => e.event === 'client_message_refused')).toMatchObject({ reason: 'batch', requests: 1 });
  });
});

describe('answers held during the handshake', () => {
  it('judges a listing the client asked for before its initialize was answered, before releasing it', async () => {
    serve({ drift: true, lateInit: true }); // the listing is answered first, while the initialize result is awaited
    const s = new RawSession(home, 'tf');
    s.send(`${INITIALIZE}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n`);
    await s.until(() => s.lines().length >= 2, 'both answers');
    s.close();
    await s.exited;
    const listing = s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).find((m) => m.id === 2);
    expect(listing).toMatchObject({ result: { tools: [] } });
    expect(s.stdoutBytes.toString()).not.toContain(POISON);
  });
});

describe('a session with no handshake to judge against', () => {
  it('refuses a client listing it has no verified surface to judge with, instead of passing it on', async () => {
    serve({ drift: true });
    const s = new RawSession(home, 'tf');
    s.send('{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n');
    const answer = await s.message(1);
    s.close();
    await s.exited;
    expect(answer).toMatchObject({ id: 'x', error: { code: -32001, message: expect.stringMatching(/no verified handshake/) } });
    expect(s.stdoutBytes.toString()).not.toContain(POISON);
  });
});

describe("the warden's own requests cannot be told from the client's", () => {
  /** Requests (lines with a method and an id) the server received, parsed. */
  const received = (): { line: string; msg: Record<string, unknown> }[] =>
    fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((line) => ({ line, msg: JSON.parse(line) as Record<string, unknown> })).filter((r) => r.msg.id !== undefined);

  it('refuses a shim that answers a probe like an ordinary call differently from the client\'s calls', async () => {
    const file = path.join(home, 'servers.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.servers.tf.canaries = [{ name: 'echo-probe', tool: 'echo', arguments: { text: 'ping' }, normalize: [] }];
    fs.writeFileSync(file, JSON.stringify(cfg));
    expect(cli(home, ['canary', 'record', 'tf']).code).toBe(0);
    serve({ shim: true });
    const s = new RawSession(home, 'tf');
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    expect((await s.exited).code).toBe(3);
    expect(answer.error).toMatchObject({ message: expect.stringMatching(/canary "echo-probe" failed \(text/) });
  });

  it('in band, numbers every request as an SDK client does, in one sequence, in the client\'s form', async () => {
    const { client } = await connectClient(home, 'tf');
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await client.close();
    const requests = received();
    expect(requests.map((r) => r.msg.id)).toEqual(requests.map((_, i) => i));
    for (const { line } of requests) {
      expect(line).toMatch(/^\{"method":"[^"]+",("params":.*,)?"jsonrpc":"2\.0","id":\d+\}$/);
      expect(line.replace('"name":"warden-test"', '').toLowerCase()).not.toContain('warden'); // but the client's own name
    }
    // The client's tools/list and the warden's look the same but for the id.
    const lists = requests.filter((r) => r.msg.method === 'tools/list').map((r) => r.line.replace(/"id":\d+/, ''));
    expect(lists.length).toBeGreaterThanOrEqual(2);
    expect(new Set(lists).size).toBe(1);
  });

  it("never relays a request, the client's or its own, while a ping of the server's is unanswered", async () => {
    const pingLog = path.join(dir, 'pings.log');
    const file = path.join(home, 'servers.json');
    const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    cfg.servers.tf.env.PING_LOG = pingLog;
    fs.writeFileSync(file, JSON.stringify(cfg));
    serve({ pingAfter: true });
    const { client } = await connectClient(home, 'tf');
    for (let i = 0; i < 5; i++) await client.callTool({ name: 'echo', arguments: { text: `${i}` } });
    await client.listTools();
    await client.close();
    const seen = fs.readFileSync(pingLog, 'utf8').split('\n').filter(Boolean);
    expect(seen.filter((l) => l.startsWith('tools/call')).length).toBeGreaterThanOrEqual(5 + 3); // the client's and the canary's
    expect(seen.filter((l) => l.endsWith('while-ping'))).toEqual([]);
  });

  for (const verb of [['canary', 'check', 'tf'], ['verify', 'tf']]) {
    it(`out of band (${verb[0]}), opens a session like an SDK client's, with nothing naming the warden`, () => {
      const r = cli(home, verb);
      expect(r.code, r.stderr).toBe(0);
      const requests = received();
      expect(requests.length).toBeGreaterThan(2);
      // Each launch is a session of its own, numbered from 0.
      let expected = 0;
      for (const { line, msg } of requests) {
        if (msg.method === 'initialize') expected = 0;
        expect(msg.id).toBe(expected++);
        expect(line).toMatch(/^\{"method":"[^"]+",("params":.*,)?"jsonrpc":"2\.0","id":\d+\}$/);
        expect(line.toLowerCase()).not.toContain('warden');
      }
    });
  }
});
