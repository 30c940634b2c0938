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
