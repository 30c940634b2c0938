import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, addServer, cli, connectClient, tempDir } from '../helpers/warden.js';

// ATTACK: a server tells the warden's sessions from a real client's by sending the client a `ping` request
// (test/servers/attack-hostile.mjs, scenario pingOracle). An SDK client answers {"result":{}}; out of band the
// warden answers an error whose message names mcp-warden; in band the ping is held until the handshake is
// released, so nothing the warden sends at the handshake (listing, canaries) can come after a pong.
// These tests assert the secure behaviour: they FAIL on the build they were written against.

let dir: string;
let home: string;
let scenarioFile: string;
let pongLog: string;
let callLog: string;
const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));

beforeEach(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  scenarioFile = path.join(dir, 'scenario.json');
  pongLog = path.join(dir, 'pong.log');
  callLog = path.join(dir, 'calls.log');
  serve({});
  addServer(home, 'hx', [NODE, path.join(SERVERS, 'attack-hostile.mjs')], ['--env', `SCENARIO_FILE=${scenarioFile}`, '--env', `PONG_LOG=${pongLog}`, '--env', `CALL_LOG=${callLog}`]);
  // An operator's probe that looks like an ordinary call (docs/canaries.md's advice to close the content gap).
  const file = path.join(home, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.servers.hx.canaries = [{ name: 'echo-probe', tool: 'echo', arguments: { text: 'ping' }, normalize: [] }];
  fs.writeFileSync(file, JSON.stringify(cfg));
  expect(cli(home, ['canary', 'record', 'hx']).code).toBe(0);
  fs.rmSync(pongLog, { force: true });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const pongs = (): Record<string, unknown>[] => (fs.existsSync(pongLog) ? fs.readFileSync(pongLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
/** The SDK client answers the server's ping right after its first request; wait until the server has it. */
async function pongArrived(): Promise<void> {
  for (let i = 0; i < 100 && pongs().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
}

describe('attack: ping oracle', () => {
  it('out of band, the warden answers a server ping as an SDK client does (not an error naming mcp-warden)', async () => {
    serve({ pingOracle: true });
    cli(home, ['canary', 'check', 'hx']);
    const oob = pongs();
    fs.rmSync(pongLog, { force: true });
    const { client } = await connectClient(home, 'hx');
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await pongArrived();
    await client.close();
    const sdk = pongs();
    expect(sdk[0]).toEqual({ jsonrpc: '2.0', id: 'srv-ping-1', result: {} });
    expect(oob[0]).toEqual(sdk[0]); // FAILS: {"error":{"code":-32601,"message":"mcp-warden does not serve ping while fetching a surface"}}
  });

  it('canary check (the daemon\'s out-of-band backstop) fails a shim that answers real clients differently', async () => {
    serve({ pingOracle: true });
    // The shim is live: a real client's call gets another text than the one pinned.
    const { client } = await connectClient(home, 'hx');
    await client.callTool({ name: 'echo', arguments: { text: 'warm-up' } });
    await pongArrived();
    const r0 = await client.callTool({ name: 'echo', arguments: { text: 'ping' } });
    await client.close();
    expect(JSON.stringify(r0.content)).toContain('shim saw: ping');
    const r = cli(home, ['canary', 'check', 'hx']);
    expect(r.code, r.stdout + r.stderr).toBe(1); // FAILS: exit 0, the shim answered the warden honestly
  });

  it('in band, the session-start canary sees what the client will see (ADR 0012 admits timing; this makes it deterministic)', async () => {
    serve({ pingOracle: true });
    let released = true;
    let text = '';
    try {
      const { client } = await connectClient(home, 'hx');
      await client.callTool({ name: 'echo', arguments: { text: 'warm-up' } });
      await pongArrived();
      const r = await client.callTool({ name: 'echo', arguments: { text: 'ping' } });
      text = JSON.stringify(r.content);
      await client.close();
    } catch {
      released = false;
    }
    // Secure: either the session was refused by the echo-probe canary, or the client got the pinned answer.
    expect(!released || !text.includes('shim saw')).toBe(true); // FAILS: released, and the client got the shim's text
  });
});
