import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../helpers/warden.js';
import { MODERN, connectV2, sdk2Home, type Mode, type Sdk2Home } from './helpers.js';

// Issue 27, tried as a new user would: the real SDK v2 client (auto, pinned to 2026-07-28, default legacy)
// against real SDK v2 servers (`serveStdio` serving both eras, and `{ legacy: 'reject' }` modern only) through
// `mcp-warden run`. Without the warden each pair works; through it, each must work on a judged session of the
// era the client and server chose, and the warden must not cross eras on the client's behalf.

let h: Sdk2Home | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const methods = (home: Sdk2Home): unknown[] => home.received().map((m) => m.method);

async function useEverything(home: string, id: string, mode: Mode): Promise<{ era: string | undefined; tools: string[]; echo: unknown; prompt: unknown; read: unknown }> {
  const { client, stderr } = await connectV2(home, id, mode);
  try {
    const era = client.getProtocolEra();
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    const echo = (await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content;
    const prompt = (await client.getPrompt({ name: 'greet' })).messages;
    const read = (await client.readResource({ uri: 'note://one' })).contents;
    return { era, tools, echo, prompt, read };
  } catch (e) {
    throw new Error(`${(e as Error).message}\nwarden stderr: ${stderr()}`);
  } finally {
    await client.close();
  }
}

const EXPECTED = {
  tools: ['deploy', 'echo', 'grow'],
  echo: [{ type: 'text', text: 'echo: hi' }],
  prompt: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }],
  read: [{ uri: 'note://one', text: 'the note' }],
};

describe('a serveStdio server (both eras) through mcp-warden run', () => {
  it("an auto client connects in the modern era and lists, calls, gets the prompt and reads the resource as locked", async () => {
    h = sdk2Home('both', {});
    h.clearLog(); // what the session sends, not what the lock's own launches did
    expect(await useEverything(h.home, 'both', 'auto')).toEqual({ era: 'modern', ...EXPECTED });
    expect(methods(h)).not.toContain('initialize'); // the warden never sends initialize into a modern connection
  });

  it('a client pinned to 2026-07-28 connects and uses the judged session', async () => {
    h = sdk2Home('both', {});
    h.clearLog();
    expect(await useEverything(h.home, 'both', 'pin')).toEqual({ era: 'modern', ...EXPECTED });
    expect(methods(h)).not.toContain('initialize');
  });

  it('a default (legacy) client gets a 2025 session as before, and the server never receives server/discover', async () => {
    h = sdk2Home('both', {});
    h.clearLog();
    expect(await useEverything(h.home, 'both', 'legacy')).toEqual({ era: 'legacy', ...EXPECTED });
    expect(methods(h)).not.toContain('server/discover'); // never sent into a 2025 connection the client opened
  });
});

describe("a modern-only server (serveStdio with { legacy: 'reject' })", () => {
  it('enrolls: add locks it over the stateless flow, and tools.lock records the flow and the era', async () => {
    const home = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    h = home;
    const added = home.added;
    expect(added.stderr + added.stdout).not.toMatch(/Unsupported protocol version/);
    expect(added.code).toBe(0);
    const entry = JSON.parse(fs.readFileSync(path.join(h.home, 'tools.lock'), 'utf8')).servers['modern-only'];
    expect(entry.protocol).toEqual({ offered: MODERN, era: MODERN, flow: 'stateless' });
    expect(entry.instructions).toBe('Use echo to echo.');
    expect(entry.tools.map((t: { name: string }) => t.name)).toEqual(['deploy', 'echo', 'grow']);
    // The lock's own launches: a probe that commits, no fallback; one launch asks a 2025 initialize for the print
    // of the classic answer only (docs/adr/0055), which this server refuses: nothing is listed over it; then the
    // lock's second listing, held open for the canary baselines (docs/adr/0061: the classic face comes before it).
    const seen = methods(h);
    expect(seen.filter((m) => m === 'initialize')).toHaveLength(1);
    const listing = ['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'];
    expect(seen.slice(0, 11)).toEqual([...listing, 'initialize', ...listing]);
    expect(seen).not.toContain('notifications/initialized');
    expect(seen.slice(11).filter((m) => m !== 'tools/call')).toEqual([]); // the canaries ran on the held launch
  });

  it.each(['auto', 'pin'] as const)('a client in %s mode runs through the warden on a judged modern session', async (mode) => {
    h = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    expect(await useEverything(h.home, 'modern-only', mode)).toEqual({ era: 'modern', ...EXPECTED });
  });

  it('verify re-uses the recorded stateless flow and only that flow', async () => {
    h = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    h.clearLog();
    const r = cli(h.home, ['verify', 'modern-only']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const seen = methods(h);
    expect(seen).toContain('server/discover');
    expect(seen).not.toContain('initialize');
  });
});
