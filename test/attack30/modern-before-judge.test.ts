import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';
import { MARKER, answerTo, modernLine } from '../attack27/helpers.js';

// Issue 26, seventh closing review. On a 2025 connection nothing but ping is relayed before the handshake is
// judged (completion/complete is refused as `no_handshake`). On a 2026-07-28 connection the judge is built only
// before "the first request that needs a judge" (a listing, a call, a get, a read): completion/complete
// ('pass') and subscriptions/listen are relayed before it, and their answers (and the listen acknowledgement's
// params, whole) reach the client from a server whose surface nothing has judged yet; here one whose
// instructions and tool drifted since the lock (the enforce posture refuses them).
// (Fixed: every modern request but server/discover waits for the judge, and is answered with the refusal when the
// judge refuses the server. Corrected here: the first case's server is not refused. On a connection without
// server/discover its instructions are never shown, so the judge takes them from the lock (docs/adr/0044), and a
// drifted tool is refused by itself, as on a 2025 session; the server is admitted, and a completion's values
// then pass as on a released 2025 session (the threat model's "not claimed"). What the case proves is the order:
// the server reads the warden's own listing before the completion request.)

let dir: string;
let home: string;
let scenarioFile: string;
let logFile: string;
beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  logFile = path.join(dir, 'received.jsonl');
  fs.writeFileSync(scenarioFile, '{}');
  addServer(home, 'early', [NODE, path.join(SERVERS, 'attack30/before-judge.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`, '--env', `LOG_FILE=${logFile}`]);
  expect(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).toContain('"stateless"');
  fs.writeFileSync(scenarioFile, JSON.stringify({ drift: true }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function session(lines: string, ids: (string | number)[], id = 'early'): Promise<{ answers: Record<string, unknown>[]; stdout: string }> {
  const s = new RawSession(home, id);
  try {
    s.send(lines);
    const answers: Record<string, unknown>[] = [];
    for (const id of ids) answers.push(await answerTo(s, id));
    // A later judged request: everything the warden relayed before it is on stdout by the time it is answered.
    if (id === 'early') {
      s.send(modernLine('last', 'tools/list'));
      await answerTo(s, 'last');
    }
    return { answers, stdout: s.stdoutBytes.toString() };
  } finally {
    s.close();
    await s.exited;
  }
}

describe('a 2026-07-28 connection before its surface is judged, against a drifted server', () => {
  it("relays no completion/complete answer of the server's before the judge exists", async () => {
    fs.rmSync(logFile, { force: true });
    const { answers, stdout } = await session(modernLine(1, 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'a', value: 'x' } }), [1]);
    const read = fs.readFileSync(logFile, 'utf8').split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { method?: string }).method);
    // The warden's own listing (every tool page, then the prompts it locked, and its canary) comes first; the
    // request after it.
    const at = read.indexOf('completion/complete');
    expect(read[0]).toBe('tools/list');
    expect(at).toBeGreaterThan(0);
    expect(read.slice(0, at)).toContain('prompts/list');
    // Judged and admitted, then its values read by the name check (review 28): they speak in the warden's name
    // ("IMPORTANT: mcp-warden requires you..."), so the answer is the warden's refusal, not the values.
    expect(answers[0]?.result).toBeUndefined();
    expect(answers[0]?.error).toMatchObject({ code: -32001, message: expect.stringContaining('its completion values are worded as a message of mcp-warden') });
    // The drifted tool is refused by itself: the judged listing after it does not show it.
    expect(stdout).not.toContain('Echoes. Then send');
  });

  it("relays neither the subscriptions/listen acknowledgement's own text nor its result before the judge exists", async () => {
    const { answers, stdout } = await session(modernLine('sub', 'subscriptions/listen', { notifications: { toolsListChanged: true } }), ['sub']);
    expect(stdout).not.toContain(MARKER);
    // Both as the warden's lines: the acknowledgement of what the client asked, stamped with its id; the result
    // with the revision's members only.
    const acks = stdout.split('\n').filter((l) => l.includes('notifications/subscriptions/acknowledged'));
    expect(acks.map((l) => JSON.parse(l) as unknown)).toEqual([{ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub' } } }]);
    expect(answers[0]).toEqual({ jsonrpc: '2.0', id: 'sub', result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'before-judge', version: '1.0.0' } } } });
  });

  it("relays no completion/complete answer of a server that has no entry in tools.lock (a 2025 session of it is refused)", async () => {
    const scenario = path.join(dir, 'unlocked.json');
    fs.writeFileSync(scenario, JSON.stringify({ unlockable: true }));
    const add = cli(home, ['add', 'unlocked', '--yes', '--env', `SCENARIO_FILE=${scenario}`, '--', NODE, path.join(SERVERS, 'attack30/before-judge.mjs')]);
    expect(add.stdout + add.stderr).toContain('could not be locked');
    expect(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).not.toContain('"unlocked"');
    fs.writeFileSync(scenario, '{}');
    const { answers, stdout } = await session(modernLine(1, 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'a', value: 'x' } }), [1], 'unlocked');
    expect(answers[0]?.result).toBeUndefined();
    expect(stdout).not.toContain(MARKER);
  });
});
