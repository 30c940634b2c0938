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
