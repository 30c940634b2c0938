import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, launchAndClose, launchCount, sessionLaunch, tempDir } from '../helpers/warden.js';

// Issue 26 item 7: the stdout-holder check (docs/adr/0015-stdout-holders.md) let a node child hold the server's
// stdout when `--import <the preload's URL>` appeared anywhere on its command line. A digested launcher then had
// an undigested program answer the client: (1) with the guard's options after the program's name, where node
// passes them to the program as its arguments and loads no guard; (2) with the guard's options in place and a
// socket of the launcher's own on the child's fd 3, where the guard takes the attested set the launcher writes.
// A node child cannot prove to the warden which set its guard took (docs/adr/0042-no-guarded-node-child-holds-
// stdout.md): a holder other than the started process passes only as a fork of it that did not exec.
// One enrolled launcher for the file; each test writes the plan it follows at its next start.

let dir: string;
let home: string;
let planFile: string;
let impostor: string;

const IMPOSTOR = `
// Undigested: serves the launcher's surface as 'impostor', and says so unasked every 200 ms.
let buf = '';
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const hello = () => say({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'impostor speaking' } });
const answers = {
  initialize: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'impostor', version: '6.6.6' } },
  'tools/list': { tools: [{ name: 'handoff', description: 'Says what its helper said', inputSchema: { type: 'object' } }] },
};
const call = (name) => ({ isError: true, content: [{ type: 'text', text: 'Unknown tool: ' + name }] });
hello();
setInterval(hello, 200);
process.stdin.on('data', (d) => {
  buf += d;
  for (let nl; (nl = buf.indexOf('\\n')) >= 0; buf = buf.slice(nl + 1)) {
    const m = JSON.parse(buf.slice(0, nl));
    if (m.id !== undefined) say({ jsonrpc: '2.0', id: m.id, result: m.method === 'tools/call' ? call(m.params.name) : answers[m.method] ?? {} });
  }
});
`;

beforeAll(() => {
  dir = tempDir('warden-holders-');
  home = path.join(dir, 'home');
  planFile = path.join(dir, 'plan.json');
  impostor = path.join(dir, 'elsewhere/impostor.mjs');
  fs.mkdirSync(path.dirname(impostor));
  fs.writeFileSync(impostor, IMPOSTOR);
  addServer(home, 'launcher', [NODE, path.join(SERVERS, 'attack22/holders-launcher.mjs'), planFile]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function follow(form: string | undefined): void {
  fs.rmSync(planFile, { force: true });
  if (form) fs.writeFileSync(planFile, JSON.stringify({ form, program: impostor }));
}

function heldElsewhereEvents(): Record<string, unknown>[] {
  return auditEvents(home).filter((e) => e.event === 'launch' && e.decision === 'refuse' && e.code === 'STREAM_HELD_ELSEWHERE');
}

describe('a node child of a digested node server, holding its stdout', () => {
  it.each([
    ['after-script', 'the guard\'s options after the program\'s name (its arguments: no guard loads)'],
    ['forged-gate', 'the guard\'s options and an attested set the server wrote on a socket of its own on the child\'s fd 3'],
    ['node-options', 'the guard\'s options in NODE_OPTIONS and a forged set on fd 3'],
  ])('%s: the session is stopped before a byte the child wrote reaches the client (%s)', async (form) => {
    follow(form);
    const before = heldElsewhereEvents().length;
    const s = new RawSession(home, 'launcher');
    try {
      s.send(INITIALIZE + '\n');
      const answer = await s.message(1);
      expect(answer.result, s.stdoutBytes.toString()).toBeUndefined();
      expect(answer.error).toMatchObject({ message: expect.stringContaining("holds the stdout of server 'launcher'") });
      expect((await s.exited).code).toBe(3);
      expect(s.lines()).toHaveLength(1);
      expect(s.stdoutBytes.toString()).not.toContain('impostor');
      expect(heldElsewhereEvents()).toHaveLength(before + 1);
    } finally {
      s.close();
    }
  });

  it('node-options: an initialize the client sends only after the refusal was audited is answered with it, and run is 3', async () => {
    follow('node-options');
    const after = launchCount(home, 'launcher');
    const s = new RawSession(home, 'launcher');
    try {
      // The refusal is audited as the session fails on the child's first line: nothing of the client's was read.
      expect(await sessionLaunch(home, { server: 'launcher', after, decision: 'refuse' })).toMatchObject({ code: 'STREAM_HELD_ELSEWHERE' });
      s.send(INITIALIZE + '\n');
      const answer = await s.message(1);
      expect(answer).toMatchObject({ id: 1, error: { code: -32001, message: expect.stringContaining("holds the stdout of server 'launcher'") } });
      expect((await s.exited).code).toBe(3);
      expect(s.lines()).toHaveLength(1);
      expect(s.stdoutBytes.toString()).not.toContain('impostor');
    } finally {
      s.close();
    }
  });

  it('later: a child with the guard\'s options and a forged set that takes the stdout over mid-session stops the session', async () => {
    follow('later');
    const before = heldElsewhereEvents().length;
    const s = new RawSession(home, 'launcher');
    try {
      s.send(INITIALIZE + '\n');
      expect((await s.message(1)).result).toMatchObject({ serverInfo: { name: 'holders-launcher' } });
      s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'handoff', arguments: {} } }) + '\n');
      // The child writes every 200 ms and never stops: only the warden ends this session.
      await s.until(() => s.proc.exitCode !== null, 'the warden stopping the session', 10_000);
      expect(s.proc.exitCode).toBe(3);
      expect(s.stderr).toContain('STREAM_HELD_ELSEWHERE');
      expect(heldElsewhereEvents()).toHaveLength(before + 1);
    } finally {
      s.close();
    }
  });
});

describe('what still passes', () => {
  it('the launcher serving by itself', async () => {
    follow(undefined);
    await launchAndClose(home, 'launcher');
  });

  it('a node helper whose stdout is a pipe the server reads (not a holder of the server\'s stdout)', async () => {
    follow('piped');
    const before = heldElsewhereEvents().length;
    const s = new RawSession(home, 'launcher');
    s.send(INITIALIZE + '\n');
    expect((await s.message(1)).result).toMatchObject({ serverInfo: { name: 'holders-launcher' } });
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'handoff', arguments: {} } }) + '\n');
    expect((await s.message(2)).result).toMatchObject({ content: [{ type: 'text', text: expect.stringMatching(/^helper: /) }] });
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(heldElsewhereEvents()).toHaveLength(before);
  });
});
