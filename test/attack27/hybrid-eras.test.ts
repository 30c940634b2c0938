import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RawSession, cli, connectClient } from '../helpers/warden.js';
import { answerTo, connectV2, modernLine, sdk2Home } from './helpers.js';

// Issue 27 (docs/adr/0055-a-print-per-era.md): a server that serves both eras and describes itself differently
// in each, as Python `mcp` 2.3.0's MCPServer does (tools `listChanged` and resources `subscribe` true to
// server/discover, false to a 2025 initialize). Enrolled over the stateless flow, its lock holds a print of each
// era's answer: a 2025 client (the SDK v1 `Client`) and a modern one (the SDK v2 `Client`, pinned to 2026-07-28)
// are both served in enforce, and a change of one era's answer is refused in that era only.

const HYBRID = { entry: 'serve', eraCapabilities: true };

let h: ReturnType<typeof sdk2Home> | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** A 2025 session through the warden (SDK v1): the tools it lists, or the refusal it met. */
async function legacyOutcome(home: string, id: string): Promise<string[] | string> {
  let connected;
  try {
    connected = await connectClient(home, id);
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
  try {
    const names = (await connected.client.listTools()).tools.map((t) => t.name).sort();
    const r = await connected.client.callTool({ name: 'echo', arguments: { text: 'v1' } });
    expect(r.content).toEqual([{ type: 'text', text: 'echo: v1' }]);
    return names;
  } finally {
    await connected.client.close();
  }
}

/** A modern session through the warden (SDK v2, pinned): the tools it lists, or the refusal it met. */
async function modernOutcome(home: string, id: string): Promise<string[] | string> {
  let connected;
  try {
    connected = await connectV2(home, id, 'pin');
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
  try {
    expect(connected.client.getProtocolEra()).toBe('modern');
    const names = (await connected.client.listTools()).tools.map((t) => t.name).sort();
    const r = await connected.client.callTool({ name: 'echo', arguments: { text: 'v2' } });
    expect(r.content).toEqual([{ type: 'text', text: 'echo: v2' }]);
    return names;
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  } finally {
    await connected.client.close();
  }
}

const TOOLS = ['deploy', 'echo', 'grow'];
const CLASSIC_REFUSED = "refused: MCP error -32001: mcp-warden closed the session: server 'hybrid' was refused: its initialize result changed since it was locked (member serverInfo)";
/** What the SDK v2 client pinned to 2026-07-28 says when the warden refuses its server/discover. */
const MODERN_REFUSED = 'refused: Version negotiation failed: the server did not offer pinned protocol version 2026-07-28 via server/discover (no fallback in pin mode)';

/** The warden's answer to a server/discover sent as the SDK v2 client sends it (its error message, or the result). */
async function rawDiscover(home: string): Promise<unknown> {
  const s = new RawSession(home, 'hybrid');
  try {
    s.send(modernLine('d1', 'server/discover'));
    const answer = await answerTo(s, 'd1');
    return answer.error ? (answer.error as { message: string }).message : answer.result;
  } finally {
    s.close();
    await s.exited;
  }
}

type Entry = { handshake?: unknown[]; handshake_classic?: unknown[] };
const wardenLock = (home: string): { servers: Record<string, Entry> } => JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8'));
const protocolOf = (home: string, id: string): unknown => (JSON.parse(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')) as { servers: Record<string, { protocol: unknown }> }).servers[id]?.protocol;

/** `verify --json`: its exit code and the server's handshake drift. */
function verified(home: string): { code: number | null; handshake: unknown } {
  const v = cli(home, ['verify', 'hybrid', '--json']);
  return { code: v.code, handshake: (JSON.parse(v.stdout) as { servers: { handshake?: unknown }[] }).servers[0]?.handshake };
}

describe('a hybrid that describes itself differently per era is served in both eras', () => {
  it('enrolled over the stateless flow, in enforce: a 2025 SDK v1 client and a modern SDK v2 client are both served the locked tools, and verify says ok', async () => {
    h = sdk2Home('hybrid', HYBRID);
    expect(protocolOf(h.home, 'hybrid')).toMatchObject({ flow: 'stateless', era: '2026-07-28' });
    const entry = wardenLock(h.home).servers.hybrid as Entry;
    expect(entry.handshake).toHaveLength(1);
    expect(entry.handshake_classic).toHaveLength(1);
    expect(entry.handshake_classic).not.toEqual(entry.handshake); // the two eras' answers differ (capabilities)
    expect(await legacyOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    expect(await modernOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    expect(verified(h.home)).toEqual({ code: 0, handshake: { state: 'matched', fields: [] } });
  });

  it('its 2025 answer changed (serverInfo.version): a 2025 client is refused, a modern client is still served, verify reports the initialize result', async () => {
    h = sdk2Home('hybrid', HYBRID);
    h.scenario({ ...HYBRID, version: { legacy: '1.0.1' } });
    expect(await legacyOutcome(h.home, 'hybrid')).toContain(CLASSIC_REFUSED);
    expect(await modernOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    expect(verified(h.home)).toEqual({ code: 1, handshake: { state: 'changed', fields: ['serverInfo'] } });
  });

  it('its modern answer changed (serverInfo.version): a modern client is refused, a 2025 client is still served, verify reports the initialize result', async () => {
    h = sdk2Home('hybrid', HYBRID);
    h.scenario({ ...HYBRID, version: { modern: '1.0.1' } });
    expect(await modernOutcome(h.home, 'hybrid')).toBe(MODERN_REFUSED);
    // The warden refused it, on the member that changed.
    expect(await rawDiscover(h.home)).toBe("mcp-warden refused the server/discover answer of server 'hybrid': its server/discover result (read as an initialize result) changed since it was locked (member serverInfo). Run 'mcp-warden status hybrid' or 'mcp-warden diff hybrid' for details.");
    expect(await legacyOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    expect(verified(h.home)).toEqual({ code: 1, handshake: { state: 'changed', fields: ['serverInfo'] } });
  });

  it('its 2025 answer changed, then diff and pin: the pin takes the classic print diff showed, and a 2025 client is served again', async () => {
    h = sdk2Home('hybrid', HYBRID);
    const before = (wardenLock(h.home).servers.hybrid as Entry).handshake_classic;
    h.scenario({ ...HYBRID, version: { legacy: '1.0.1' } });
    const d = cli(h.home, ['diff', 'hybrid']);
    expect(d.code).toBe(1);
    expect(d.stdout).toContain('served to a 2025 client serverInfo: {"name":"sdk2-serve-stdio","version":"1.0.1"}');
    const p = cli(h.home, ['pin', 'hybrid']);
    expect(p.stderr).toBe('');
    expect(p.code).toBe(0);
    const after = wardenLock(h.home).servers.hybrid as Entry;
    expect(after.handshake_classic).toHaveLength(1);
    expect(after.handshake_classic).not.toEqual(before);
    expect(await legacyOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    expect(await modernOutcome(h.home, 'hybrid')).toEqual(TOOLS);
  });

  it('an entry without handshake_classic (taken before ADR 0055) is read, and judges a 2025 session against the discover prints, as before: refused on capabilities', async () => {
    h = sdk2Home('hybrid', HYBRID);
    const file = path.join(h.home, 'warden.lock');
    const lock = wardenLock(h.home);
    delete (lock.servers.hybrid as Entry).handshake_classic;
    fs.writeFileSync(file, JSON.stringify(lock));
    expect(await legacyOutcome(h.home, 'hybrid')).toContain("its initialize result changed since it was locked (member capabilities)");
    expect(await modernOutcome(h.home, 'hybrid')).toEqual(TOOLS);
  });
});

describe('a server of one era keeps one era\'s prints', () => {
  it('a modern server that refuses a 2025 initialize (serveStdio legacy: reject) is locked with no handshake_classic', async () => {
    h = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    expect(h.added.code).toBe(0);
    expect(protocolOf(h.home, 'modern-only')).toMatchObject({ flow: 'stateless' });
    const entry = wardenLock(h.home).servers['modern-only'] as Entry;
    expect(entry.handshake).toHaveLength(1);
    expect(entry).not.toHaveProperty('handshake_classic');
  });
});
