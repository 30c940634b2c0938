import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, cli, tempDir } from '../helpers/warden.js';
import { MODERN, SDK2_SERVER, sdk2Home } from './helpers.js';

// Issue 27 item 2: the warden's own requests over the stateless flow (lock, verify, canaries) must not be told
// from a real SDK v2 client's (@modelcontextprotocol/client 2.4.0) by anything in them: the lines the server reads
// from the warden and from the SDK client, with the same client identity and capabilities, are byte-equal.

let h: ReturnType<typeof sdk2Home> | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.cleanup();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  h = undefined;
});

const lines = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** The lines serve-stdio.mjs reads from the SDK v2 client pinned to 2026-07-28 that lists the tools, then the
 *  prompts, resources and resource templates (the order the warden lists them in). */
async function sdkLines(capabilities: Record<string, unknown>): Promise<string[]> {
  const dir = tempDir();
  dirs.push(dir);
  const log = path.join(dir, 'sdk.jsonl');
  fs.writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify({ entry: 'reject' }));
  const client = new Client({ name: 'mcp-client', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: MODERN } } });
  const env = { ...(process.env as Record<string, string>), SCENARIO_FILE: path.join(dir, 'scenario.json'), LOG_FILE: log };
  await client.connect(new StdioClientTransport({ command: NODE, args: [SDK2_SERVER], env, stderr: 'ignore' }));
  try {
    await client.listTools();
    await client.listPrompts();
    await client.listResources();
    await client.listResourceTemplates();
  } finally {
    await client.close();
  }
  return lines(log);
}

describe("the warden's requests over the stateless flow", () => {
  it("are byte-equal to an SDK v2 client's with the same identity: the probe, then every listing, each with the envelope", async () => {
    h = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    expect(h.added.code, h.added.stderr + h.added.stdout).toBe(0);
    h.clearLog();
    const verified = cli(h.home, ['verify', 'modern-only']); // two launches: with capabilities, then without
    expect(verified.code, verified.stderr + verified.stdout).toBe(0);
    const warden = h.received().map((m) => JSON.stringify(m));
    const raw = lines(path.join(path.dirname(h.home), 'received.jsonl'));
    expect(raw).toHaveLength(warden.length);
    // The first launch offers roots, sampling and elicitation (src/proxy/fetch.ts), the second nothing; both present
    // the generic identity of a home no client used yet.
    const full = await sdkLines({ roots: { listChanged: true }, sampling: {}, elicitation: {} });
    const bare = await sdkLines({});
    expect(raw).toEqual([...full, ...bare]);
    expect(bare.map((l) => (JSON.parse(l) as { method: string }).method)).toEqual(['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);
  });
});
