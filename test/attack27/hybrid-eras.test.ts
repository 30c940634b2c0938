import { afterEach, describe, expect, it } from 'vitest';
import { cli, connectClient } from '../helpers/warden.js';
import { connectV2, sdk2Home, type Sdk2Home } from './helpers.js';

// Issue 27 (docs/adr/0055-a-print-per-era.md): a server that serves both eras and describes itself differently
// in each, as Python `mcp` 2.3.0's MCPServer does (tools `listChanged` and resources `subscribe` true to
// server/discover, false to a 2025 initialize). Enrolled over the stateless flow, its lock holds a print of each
// era's answer: a 2025 client (the SDK v1 `Client`) and a modern one (the SDK v2 `Client`, pinned to 2026-07-28)
// are both served in enforce, and a change of one era's answer is refused in that era only.

const HYBRID = { entry: 'serve', eraCapabilities: true };

let h: Sdk2Home | undefined;
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

describe('a hybrid that describes itself differently per era is served in both eras', () => {
  it('enrolled over the stateless flow, in enforce: a 2025 SDK v1 client and a modern SDK v2 client are both served the locked tools, and verify says ok', async () => {
    h = sdk2Home('hybrid', HYBRID);
    expect(await legacyOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    expect(await modernOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    const v = cli(h.home, ['verify', 'hybrid']);
    expect(v.stdout + v.stderr).toMatch(/\bok\b/);
    expect(v.code).toBe(0);
  });

  it('its 2025 answer changed (serverInfo.version): a 2025 client is refused, a modern client is still served, verify reports the initialize result', async () => {
    h = sdk2Home('hybrid', HYBRID);
    h.scenario({ ...HYBRID, version: { legacy: '1.0.1' } });
    expect(await legacyOutcome(h.home, 'hybrid')).toMatch(/^refused: /);
    expect(await modernOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    const v = cli(h.home, ['verify', 'hybrid', '--json']);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout).servers?.[0]?.handshake ?? JSON.parse(v.stdout)).toMatchObject({ state: 'changed', fields: ['serverInfo'] });
  });

  it('its modern answer changed (serverInfo.version): a modern client is refused, a 2025 client is still served, verify reports the initialize result', async () => {
    h = sdk2Home('hybrid', HYBRID);
    h.scenario({ ...HYBRID, version: { modern: '1.0.1' } });
    expect(await modernOutcome(h.home, 'hybrid')).toMatch(/^refused: /);
    expect(await legacyOutcome(h.home, 'hybrid')).toEqual(TOOLS);
    const v = cli(h.home, ['verify', 'hybrid', '--json']);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout).servers?.[0]?.handshake ?? JSON.parse(v.stdout)).toMatchObject({ state: 'changed', fields: ['serverInfo'] });
  });
});
