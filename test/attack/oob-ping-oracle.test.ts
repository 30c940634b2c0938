import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeTemplate } from '../helpers/template-home.js';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, cli, tempDir } from '../helpers/warden.js';

// ATTACK: a server tells the warden's sessions from a real client's by sending the client a `ping` request
// (test/servers/attack-hostile.mjs, scenario pingOracle). An SDK client answers {"result":{}}; out of band the
// warden answers an error whose message names mcp-warden; in band the ping is held until the handshake is
// released, so nothing the warden sends at the handshake (listing, canaries) can come after a pong.
// These tests assert the secure behaviour: they failed on the build they were written against. Since, the
// warden answers out of band as the SDK client does and, in band, lets the ping through at once and holds its
// own requests until the client's pong has reached the server.

let dir: string;
let home: string;
let scenarioFile: string;
let pongLog: string;
const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));

// attack-hostile.mjs added with its scenario and pong log in the test's dir and its canary recorded, once; each
// test gets a copy (helpers/template-home.ts).
const template = homeTemplate((d, h) => {
  fs.writeFileSync(path.join(d, 'scenario.json'), JSON.stringify({}));
  addServer(h, 'hx', [NODE, path.join(SERVERS, 'attack-hostile.mjs')], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`, '--env', `PONG_LOG=${path.join(d, 'pong.log')}`]);
  // An operator's probe that looks like an ordinary call (docs/canaries.md's advice to close the content gap).
  const file = path.join(h, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.servers.hx.canaries = [{ name: 'echo-probe', tool: 'echo', arguments: { text: 'ping' }, normalize: [] }];
  fs.writeFileSync(file, JSON.stringify(cfg));
  const r = cli(h, ['canary', 'record', 'hx']);
  if (r.code !== 0) throw new Error(`canary record failed (${r.code}): ${r.stderr}`);
});

beforeEach(() => {
  dir = tempDir();
  scenarioFile = path.join(dir, 'scenario.json');
  pongLog = path.join(dir, 'pong.log');
  serve({});
  home = template.copyTo(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('attack: ping oracle', () => {
  it('out of band, the warden answers a server ping as an SDK client does, byte for byte (not an error naming mcp-warden)', () => {
    serve({ pingOracle: true });
    cli(home, ['canary', 'check', 'hx']);
    const raw = fs.readFileSync(pongLog, 'utf8').split('\n').filter(Boolean);
    // What the SDK's Protocol writes for its built-in ping handler: result first, then jsonrpc and id.
    expect(raw[0]).toBe('{"result":{},"jsonrpc":"2.0","id":"srv-ping-1"}');
  });

  it("canary check (the daemon's out-of-band backstop) fails a shim that answers real clients differently", () => {
    serve({ pingOracle: true });
    const r = cli(home, ['canary', 'check', 'hx']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/echo-probe: FAIL \(text\)/);
  });

  it('in band, the session-start canary sees what the client will see: the shim is refused before the client is released', async () => {
    serve({ pingOracle: true });
    const s = new RawSession(home, 'hx');
    s.send(INITIALIZE + '\n');
    // The ping reaches the client before its initialize is answered; the client answers it as the SDK does.
    const parsed = (): Record<string, unknown>[] => s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>);
    await s.until(() => parsed().some((m) => m.method === 'ping'), 'the server ping, passed on before the release');
    // Under an id of the warden's (the server's is its own text: ADR 0051), which the client answers.
    const ping = parsed().find((m) => m.method === 'ping') as { id: string };
    expect(ping.id).toMatch(/^mcp-warden-ping-[0-9a-f]{24}-0$/);
    s.send(`{"result":{},"jsonrpc":"2.0","id":${JSON.stringify(ping.id)}}\n`);
    await s.until(() => parsed().some((m) => m.id === 1), 'the initialize answer');
    s.close();
    expect((await s.exited).code).toBe(3);
    expect(parsed().find((m) => m.id === 1)?.error).toMatchObject({ message: expect.stringMatching(/canary "echo-probe" failed \(text/) });
    // The server got the client's pong under its own id.
    expect(fs.readFileSync(pongLog, 'utf8').split('\n').filter(Boolean)).toEqual(['{"result":{},"jsonrpc":"2.0","id":"srv-ping-1"}']);
  });
});
