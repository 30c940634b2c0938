import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo } from '../attack27/helpers.js';

// Issue 26, sixth closing review. ADR 0051 rejected "an id the warden checks" because "any string that passes it
// is still the server's text"; the fifth review's duplicate-key road was closed by cutting the quoted names to 64
// characters. The same holds for every refusal of the warden's own that quotes what the server chose: it reaches
// the client as the error of its initialize, in the warden's voice ("mcp-warden closed the session: ..."), before
// (indeed because) the handshake was refused. None of these needs more than 64 characters a name.

let dir: string;
let home: string;
let scenarioFile: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenarioFile, '{}');
  addServer(home, 'reftext', [NODE, path.join(SERVERS, 'attack29/refusal-text.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';

async function initializeAnswer(mode: string): Promise<{ answer: Record<string, unknown>; stdout: string }> {
  fs.writeFileSync(scenarioFile, JSON.stringify({ mode }));
  const s = new RawSession(home, 'reftext');
  try {
    s.send(initialize);
    const answer = await answerTo(s, 1);
    return { answer, stdout: s.stdoutBytes.toString() };
  } finally {
    s.close();
    await s.exited;
  }
}

describe("the warden's own refusal of a handshake", () => {
  it("names no initialize-result member the server named with text of its own (the lock refused them)", async () => {
    const { answer, stdout } = await initializeAnswer('members');
    expect(answer.result).toBeUndefined();
    expect(JSON.stringify(answer.error)).toContain('surface_refused');
    expect(stdout).not.toContain(MARKER);
    expect(stdout).not.toContain('do not tell the user');
  });

  it("quotes no error message the server gave to the warden's own tools/list", async () => {
    const { answer, stdout } = await initializeAnswer('listerror');
    expect(answer.result).toBeUndefined();
    expect(JSON.stringify(answer.error)).toContain('mcp-warden closed the session');
    expect(stdout).not.toContain(MARKER);
  });

  it('quotes no tool name of a listing it cannot admit (a name listed twice)', async () => {
    const { answer, stdout } = await initializeAnswer('twice');
    expect(answer.result).toBeUndefined();
    expect(JSON.stringify(answer.error)).toContain('inadmissible');
    expect(stdout).not.toContain(MARKER);
  });

  it('quotes no bidi control or Unicode tag character of a case-variant envelope member (the one escaper)', async () => {
    const { answer, stdout } = await initializeAnswer('nulkey');
    expect(answer.result).toBeUndefined();
    expect(JSON.stringify(answer.error)).toContain('inadmissible');
    expect(stdout).not.toMatch(/[\u202a-\u202e\u2066-\u2069]|[\u{e0000}-\u{e007f}]/u);
  });

  it('quotes no member name of an unreadable (duplicate-key) initialize result, however short', async () => {
    const { answer, stdout } = await initializeAnswer('dupkey');
    expect(answer.result).toBeUndefined();
    expect(JSON.stringify(answer.error)).toContain('inadmissible');
    expect(stdout).not.toContain(MARKER);
  });
});

describe("a server's error answer to initialize", () => {
  // ADR 0051: "No text of the server's reaches the client before its handshake is judged". A server that answers
  // initialize with an error has its message and data (here 1.8 KB) relayed whole, before anything was judged;
  // the client may retry and get another, as often as it retries.
  it("reaches the client without the server's text (nothing was judged)", async () => {
    const { answer, stdout } = await initializeAnswer('initerror');
    expect(answer.result).toBeUndefined();
    expect(answer.error).toBeDefined();
    expect(stdout).not.toContain(MARKER);
  });
});

describe('the "jsonrpc" member of a response', () => {
  // "Nothing else a response carries reaches the client unjudged: its envelope is relayed as jsonrpc, id and
  // result or error only" (threat model): the members are kept, but the value of "jsonrpc" is never read, and
  // any JSON value (here an object with a sentence) passes with the judged initialize result and, before any
  // handshake, with a pong.
  it('of an initialize result equal to the lock carries nothing but "2.0"', async () => {
    const { answer } = await initializeAnswer('jsonrpc');
    expect(answer.result).toMatchObject({ serverInfo: { name: 'refusal-text' } });
    expect(answer.jsonrpc).toBe('2.0');
  });

  it('of a pong before any handshake carries nothing but "2.0"', async () => {
    fs.writeFileSync(scenarioFile, JSON.stringify({ mode: 'jsonrpc' }));
    const s = new RawSession(home, 'reftext');
    try {
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }) + '\n');
      const pong = await answerTo(s, 7);
      expect(pong.result).toEqual({});
      expect(pong.jsonrpc).toBe('2.0');
    } finally {
      s.close();
      await s.exited;
    }
  });
});
