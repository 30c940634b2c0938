import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { admitHandshake } from '../../src/surface/admit.js';
import { admitDiscover } from '../../src/surface/discover.js';
import { printsForEra } from '../../src/surface/diff.js';
import { handshakeDrift } from '../../src/surface/handshake-print.js';
import { LockfileError } from '../../src/surface/lockfile.js';
import { lockedExtra, parseWardenLock, renderWardenLock, wardenEntryFor } from '../../src/surface/warden-lock.js';

// docs/adr/0055: each era's answer is proven against its own era's prints. The two answers of Python `mcp`
// 2.3.0's MCPServer (measured: listChanged and subscribe true to server/discover, false to a 2025 initialize).

const json = (s: string) => readJson(new TextEncoder().encode(s));
const INFO = '{"name":"py-echo","version":"1.0.0"}';
const discover = admitDiscover(json(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":${INFO}}}`), '2026-07-28').handshake;
const initialize = admitHandshake(json(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false}},"serverInfo":${INFO}}`));

describe('a print per era', () => {
  it('a discover result is marked as the stateless era, an initialize result is not', () => {
    expect(discover.stateless).toBe(true);
    expect(initialize.stateless).toBeUndefined();
    expect(discover.print.hExact).not.toBe(initialize.print.hExact);
  });

  it('with classic prints, each era is proven against its own era only: never the other era\'s', () => {
    const extra = { handshake: [discover.print], classicHandshake: [initialize.print] };
    expect(handshakeDrift(printsForEra(extra, initialize), initialize.print).state).toBe('matched');
    expect(handshakeDrift(printsForEra(extra, discover), discover.print).state).toBe('matched');
    // Each era's answer served in the other era is refused.
    expect(handshakeDrift(printsForEra(extra, { stateless: true }), initialize.print)).toEqual({ state: 'changed', fields: ['capabilities'] });
    expect(handshakeDrift(printsForEra(extra, {}), discover.print)).toEqual({ state: 'changed', fields: ['capabilities'] });
  });

  it('without classic prints (a server of one era, an older entry) a 2025 answer is judged against the one print, as before', () => {
    const extra = { handshake: [discover.print] };
    expect(handshakeDrift(printsForEra(extra, initialize), initialize.print)).toEqual({ state: 'changed', fields: ['capabilities'] });
    expect(handshakeDrift(printsForEra({ handshake: [initialize.print] }, initialize), initialize.print).state).toBe('matched');
  });

  it('warden.lock keeps handshake_classic across a render and a parse, and reads an entry without it', () => {
    const entry = wardenEntryFor([], [], [], {}, [discover.print], [initialize.print]);
    const text = renderWardenLock(new Map([['py', entry]]));
    expect(text).toContain('"handshake_classic"');
    const back = parseWardenLock(new TextEncoder().encode(text)).get('py');
    expect(lockedExtra(back)).toMatchObject({ handshake: [discover.print], classicHandshake: [initialize.print] });
    const old = renderWardenLock(new Map([['py', wardenEntryFor([], [], [], {}, [discover.print])]]));
    expect(old).not.toContain('handshake_classic');
    expect(parseWardenLock(new TextEncoder().encode(old)).get('py')).not.toHaveProperty('classicHandshake');
  });

  it('warden.lock refuses a handshake_classic of more than two prints, or an empty one', () => {
    const plain = JSON.parse(renderWardenLock(new Map([['py', wardenEntryFor([], [], [], {}, [discover.print], [initialize.print])]])));
    const one = plain.servers.py.handshake_classic[0];
    for (const prints of [[one, one, one], []]) {
      plain.servers.py.handshake_classic = prints;
      expect(() => parseWardenLock(new TextEncoder().encode(JSON.stringify(plain)))).toThrow(LockfileError);
    }
  });
});
