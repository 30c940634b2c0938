import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../helpers/warden.js';
import { MODERN, sdk2Home, type Sdk2Home } from './helpers.js';

// Issue 27 item 5: canaries are recorded and checked over the flow the lock records: a stateless entry's
// canaries speak 2026-07-28 (every request with the envelope, no initialize), a classic entry's speak 2025 (no
// server/discover), whatever else the server could serve.

let h: Sdk2Home | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const VERSION = 'io.modelcontextprotocol/protocolVersion';

describe('canaries over the recorded flow', () => {
  it('a modern-only server: canary record and check run over the stateless flow', () => {
    const home = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    h = home;
    expect(home.added.code, home.added.stderr + home.added.stdout).toBe(0);
    home.clearLog();
    const recorded = cli(home.home, ['canary', 'record', 'modern-only']);
    expect(recorded.code, recorded.stderr + recorded.stdout).toBe(0);
    const checked = cli(home.home, ['canary', 'check', 'modern-only']);
    expect(checked.code, checked.stderr + checked.stdout).toBe(0);
    expect(checked.stdout).toMatch(/modern-only\/unknown-tool: pass/);
    const requests = home.received().filter((m) => m.id !== undefined && m.method !== undefined);
    expect(requests.map((m) => m.method)).not.toContain('initialize');
    for (const r of requests) expect((r.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[VERSION], String(r.method)).toBe(MODERN);
  });

  it('a classic entry of a server that now serves both eras: canary record and check run over the classic flow', () => {
    h = sdk2Home('classic', { entry: 'legacy-only' });
    h.scenario({ entry: 'serve' });
    h.clearLog();
    const recorded = cli(h.home, ['canary', 'record', 'classic']);
    expect(recorded.code, recorded.stderr + recorded.stdout).toBe(0);
    const checked = cli(h.home, ['canary', 'check', 'classic']);
    expect(checked.code, checked.stderr + checked.stdout).toBe(0);
    const seen = h.received().map((m) => m.method);
    expect(seen).toContain('initialize');
    expect(seen).not.toContain('server/discover');
  });
});
