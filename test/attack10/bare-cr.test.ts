import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { INITIALIZE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// ATTACK (framing, hostile client line): the warden frames on 0x0A only and reads a bare "\r" inside a line as
// JSON whitespace, then forwards the line as it came. The official python SDK's server reads its stdin through
// `TextIOWrapper(sys.stdin.buffer, encoding="utf-8")` (universal newlines), and node's readline does the same:
// for them a bare "\r" ends a line. So one line that the warden judges as a call of an approved tool is, to such
// a server, a broken line, a complete tools/call of a tool the warden refuses, and another broken line. The call
// gate (and the operator's rules with it) is passed: the server reads a message differently from the warden,
// which docs/adr/0006 says must never be forwarded. Failed before protocol/message.ts refused a carriage return
// that does not end the line.

const SERVER = path.join(SERVERS, 'attack10', 'universal-newlines.py');

let dir: string;
let home: string;
let toolsFile: string;
let callLog: string;

// The server added (locked with echo only), once; each test gets a copy (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  fs.writeFileSync(path.join(d, 'tools.json'), JSON.stringify(['echo']));
  addServer(h, 'py', ['python3', SERVER], ['--env', `TOOLS_FILE=${path.join(d, 'tools.json')}`, '--env', `CALL_LOG=${path.join(d, 'calls.log')}`]);
});
beforeEach(() => {
  dir = tempDir();
  toolsFile = path.join(dir, 'tools.json');
  callLog = path.join(dir, 'calls.log');
  home = template.copyTo(dir);
  // After the lock: the server adds `wipe`, a tool hidden until pinned, whose calls the warden refuses.
  fs.writeFileSync(toolsFile, JSON.stringify(['echo', 'wipe']));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const calls = (): string[] => (fs.existsSync(callLog) ? fs.readFileSync(callLog, 'utf8').split('\n').filter(Boolean) : []);
const answerTo = (s: RawSession, id: number): Record<string, unknown> | undefined =>
  s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).find((m) => m.id === id && m.method === undefined);

async function opened(): Promise<RawSession> {
  const s = new RawSession(home, 'py');
  s.send(INITIALIZE + '\n');
  await s.until(() => answerTo(s, 1) !== undefined, 'initialize result');
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return s;
}

describe('attack10: a bare carriage return inside a client line', () => {
  it('the control: a direct call of the tool added since the lock is refused and never reaches the server', async () => {
    const s = await opened();
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wipe","arguments":{}}}\n');
    await s.until(() => answerTo(s, 2) !== undefined, 'answer to the call of wipe');
    s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await s.until(() => answerTo(s, 3) !== undefined, 'pong');
    s.close();
    await s.exited;
    expect(answerTo(s, 2)?.error).toMatchObject({ message: expect.stringMatching(/refused the call to tool "wipe"/) });
    expect(calls()).not.toContain('wipe');
  });

  it('does not let a call of an approved tool carry, between bare carriage returns, a call of a refused tool to a server reading universal newlines', async () => {
    const s = await opened();
    // One JSON text to the warden (a call of `echo` with an extra member); three lines to the server.
    const smuggled = '{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"wipe","arguments":{}}}';
    s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}},"pad":[\r${smuggled}\r]}\n`);
    // The server handles lines in order: once the ping is answered, whatever it read of the line before ran.
    s.send('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await s.until(() => answerTo(s, 3) !== undefined, 'pong');
    s.close();
    await s.exited;
    const ran = calls();
    expect(ran).not.toContain('wipe');
    expect(ran).not.toContain('echo'); // the whole line was refused, not forwarded
    expect(answerTo(s, 2)?.error).toMatchObject({ message: expect.stringMatching(/not forwarded: ambiguous: a carriage return/) });
  });
});
