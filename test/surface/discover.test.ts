import { describe, expect, it } from 'vitest';
import { readJson } from '../../src/protocol/json/reader.js';
import { admitHandshake, InadmissibleError } from '../../src/surface/admit.js';
import { admitDiscover, unconfirmed } from '../../src/surface/discover.js';
import { handshakeDrift } from '../../src/surface/handshake-print.js';

// One lock entry judges both eras: a server/discover result is read as the initialize result of the same server
// (docs/adr/0044). The two results below are what @modelcontextprotocol/server 2.4.0's serveStdio answered, one
// line each, to an initialize offering 2025-11-25 and to a server/discover offering 2026-07-28.
const INITIALIZE = '{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true}},"serverInfo":{"name":"sdk2-serve-stdio","version":"1.0.0"},"instructions":"Use echo to echo."}';
const DISCOVER = '{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true}},"instructions":"Use echo to echo.","resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sdk2-serve-stdio","version":"1.0.0"}}}';

const read = (text: string) => readJson(Buffer.from(text));
const discover = (patch: (o: Record<string, unknown>) => void) => {
  const o = JSON.parse(DISCOVER) as Record<string, unknown>;
  patch(o);
  return admitDiscover(read(JSON.stringify(o)), '2026-07-28');
};

describe('a server/discover result read as the surface of an initialize result', () => {
  it('the same server in both eras has one print, one instructions text and one serverInfo', () => {
    const classic = admitHandshake(read(INITIALIZE));
    const modern = admitDiscover(read(DISCOVER), '2026-07-28');
    expect(modern.handshake.print).toEqual(classic.print);
    expect(modern.handshake.instructions).toBe(classic.instructions);
    expect(modern.handshake.serverInfo).toEqual(classic.serverInfo);
    expect(modern.handshake.era).toBe('2026-07-28');
    expect(modern.handshake.serves).toEqual({ prompts: true, resources: true });
    expect(unconfirmed(modern, '2026-07-28')).toBeUndefined();
  });

  it('negotiation and caching members (supportedVersions, resultType, ttlMs, cacheScope) are not surface', () => {
    const classic = admitHandshake(read(INITIALIZE)).print;
    const d = discover((o) => Object.assign(o, { supportedVersions: ['2026-07-28', '2027-01-01'], ttlMs: 60000, cacheScope: 'public', resultType: 'complete' }));
    expect(handshakeDrift([classic], d.handshake.print)).toEqual({ state: 'matched', fields: [] });
  });

  it.each([
    ['a changed serverInfo in _meta', (o: Record<string, unknown>) => ((o._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo'] = { name: 'other', version: '1.0.0' }), ['serverInfo']],
    ['serverInfo missing from _meta', (o: Record<string, unknown>) => (o._meta = {}), ['serverInfo']],
    ['another _meta member', (o: Record<string, unknown>) => ((o._meta as Record<string, unknown>).note = 'x'), ['_meta']],
    ['an unknown member', (o: Record<string, unknown>) => (o.systemPrompt = 'x'), ['systemPrompt']],
    ['changed capabilities', (o: Record<string, unknown>) => (o.capabilities = { tools: {} }), ['capabilities']],
  ])('%s is drift of the named member', (_what, patch, fields) => {
    const classic = admitHandshake(read(INITIALIZE)).print;
    expect(handshakeDrift([classic], discover(patch).handshake.print)).toEqual({ state: 'changed', fields });
  });

  it.each([
    ['an initialize-only protocolVersion', (o: Record<string, unknown>) => (o.protocolVersion = '2025-11-25'), 'carries "protocolVersion"'],
    ['a top-level serverInfo beside the one in _meta', (o: Record<string, unknown>) => (o.serverInfo = { name: 'x' }), 'carries "serverInfo"'],
    ['a case variant of instructions', (o: Record<string, unknown>) => (o.Instructions = 'x'), 'a case-variant of "instructions"'],
    ['a case variant of the serverInfo key of _meta', (o: Record<string, unknown>) => ((o._meta as Record<string, unknown>)['io.modelcontextprotocol/ServerInfo'] = {}), 'a case-variant of "io.modelcontextprotocol/serverInfo"'],
    ['_meta that is not an object', (o: Record<string, unknown>) => (o._meta = 'x'), '"_meta" of the server/discover result is not an object'],
    ['no supportedVersions', (o: Record<string, unknown>) => delete o.supportedVersions, '"supportedVersions"'],
    ['instructions that are not a string', (o: Record<string, unknown>) => (o.instructions = 7), '"instructions" is not a string'],
    // The revision's schema (schema/2026-07-28/schema.ts, CacheableResult): cacheScope is "public" or "private".
    ['a cacheScope the revision does not define', (o: Record<string, unknown>) => (o.cacheScope = 'shared'), '"cacheScope" of the server/discover result is neither "public" nor "private"'],
    // Review 20, noticed: result-fold.ts runs after the discover branch, so admitDiscover holds the same fold.
    ['two top-level members folding alike', (o: Record<string, unknown>) => Object.assign(o, { note: 'a', NOTE: 'b' }), 'the server/discover result carries "NOTE" and "note"'],
    ['another spelling of inputRequests', (o: Record<string, unknown>) => (o.InputRequests = {}), 'a case-variant of "inputRequests"'],
    ['two _meta members folding alike', (o: Record<string, unknown>) => Object.assign(o._meta as object, { a: 1, A: 2 }), 'the _meta of the server/discover result carries "A" and "a"'],
    ['another spelling of the subscription key in _meta', (o: Record<string, unknown>) => ((o._meta as Record<string, unknown>)['io.modelcontextprotocol/SubscriptionId'] = 'x'), 'a case-variant of "io.modelcontextprotocol/subscriptionId"'],
  ])('%s is refused as inadmissible', (_what, patch, message) => {
    let err: unknown;
    try {
      discover(patch);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InadmissibleError);
    expect((err as Error).message).toContain(message);
  });

  it('a discover that does not list the revision says which it lists', () => {
    const d = discover((o) => (o.supportedVersions = ['2025-11-25']));
    expect(unconfirmed(d, '2026-07-28')).toBe('server/discover lists "2025-11-25", not 2026-07-28');
  });
});
