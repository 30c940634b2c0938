import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../helpers/warden.js';
import { configure, opened, request, shapeshifter, toolNames, type Shifter } from '../helpers/surface.js';

// Schemas under the operator's rules, on a purpose-built server (test/servers/shapeshifter.mjs): a schema that
// reaches outside itself is refused before anything could fetch it, and a parameter is hidden only where
// nothing else in the schema refers to it.

const tool = (name: string, inputSchema: string): string => `{"name":"${name}","description":"d","inputSchema":${inputSchema}}`;
const TOOLS =
  '[' +
  [
    tool('fetch_ref', '{"type":"object","properties":{"x":{"$ref":"https://schemas.example/x.json"}}}'),
    tool('odd_dialect', '{"$schema":"https://schemas.example/meta","type":"object"}'),
    tool('local_ref', '{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}'),
    tool('combo', '{"type":"object","properties":{"path":{"type":"string"},"mode":{"type":"string"}},"anyOf":[{"required":["mode"]},{"required":["path"]}]}'),
    tool('via_ref', '{"type":"object","properties":{"path":{"type":"string"},"mode":{"type":"string"}},"allOf":[{"$ref":"#/$defs/base"}],"$defs":{"base":{"required":["mode"]}}}'),
    tool('plain', '{"type":"object","properties":{"q":{"type":"integer","maximum":9007199254740993},"mode":{"type":"string"}},"required":["q"]}'),
  ].join(',') +
  ']';

let sh: Shifter;
beforeAll(() => {
  sh = shapeshifter({ toolsRaw: TOOLS });
  configure(sh.home, { rules: { tools: { combo: { kind: 'read', deny: ['mode'] }, via_ref: { kind: 'read', deny: ['mode'] }, plain: { kind: 'read', deny: ['mode'] }, local_ref: { kind: 'read' } } } });
});
afterAll(() => sh.cleanup());

describe('schemas under the rules', () => {
  it('withholds tools whose schema reaches outside the document, keeps one with an internal $ref, and refuses their calls', async () => {
    const s = sh.session();
    await opened(s);
    const names = toolNames(await request(s, 'tools/list'));
    expect(names).not.toContain('fetch_ref');
    expect(names).not.toContain('odd_dialect');
    expect(names).toContain('local_ref');
    const call = await request(s, 'tools/call', { name: 'fetch_ref', arguments: {} });
    expect((call.error as { message: string }).message).toMatch(/\(schema_refused\): its locked schema cannot be checked/);
    const dialect = await request(s, 'tools/call', { name: 'odd_dialect', arguments: {} });
    expect((dialect.error as { message: string }).message).toMatch(/\(schema_refused\): its locked schema cannot be checked/);
    s.close();
    await s.exited;
    // Where in the server's schema is the warden's report on stderr, not the client's answer.
    expect(s.stderr).toMatch(/\(schema_refused\): its inputSchema is not self-contained: \$ref at \/properties\/x\/\$ref points outside the schema/);
    expect(s.stderr).toMatch(/\$schema at \/\$schema is not a JSON Schema dialect URL/);
    expect(s.stderr).toMatch(/schema_refused: fetch_ref, odd_dialect/);
    const refused = auditEvents(sh.home).filter((e) => e.event === 'call_refused');
    expect(refused.at(-1)).toEqual(expect.objectContaining({ tool: 'odd_dialect', reason: 'schema_refused' }));
    expect(refused.at(-1)).not.toHaveProperty('detail'); // the server's pointers stay out of the log
  });

  it('refuses a tool whose anyOf, or a $ref it follows, requires the hidden parameter, instead of rewriting it in part', async () => {
    const s = sh.session();
    await opened(s);
    const names = toolNames(await request(s, 'tools/list'));
    expect(names).not.toContain('combo');
    expect(names).not.toContain('via_ref');
    const combo = await request(s, 'tools/call', { name: 'combo', arguments: { path: '/x' } });
    expect((combo.error as { message: string }).message).toMatch(/\(schema_refused\): its locked schema cannot be checked/);
    const viaRef = await request(s, 'tools/call', { name: 'via_ref', arguments: { path: '/x' } });
    expect((viaRef.error as { message: string }).message).toMatch(/\(schema_refused\): its locked schema cannot be checked/);
    s.close();
    await s.exited;
    // Where in the server's schema is the warden's report on stderr, not the client's answer.
    expect(s.stderr).toMatch(/its input schema requires the hidden parameter "mode" at \/anyOf\/0/);
    expect(s.stderr).toMatch(/requires the hidden parameter "mode" at \/\$defs\/base/);
  });

  it('shows a schema without the denied parameter and keeps every other byte of meaning, a number beyond 2^53 included', async () => {
    const s = sh.session();
    await opened(s);
    await request(s, 'tools/list');
    const line = s.lines().map((l) => l.toString()).find((l) => l.includes('"plain"')) ?? '';
    expect(line).toContain('{"name":"plain","description":"d","inputSchema":{"type":"object","properties":{"q":{"type":"integer","maximum":9007199254740993}},"required":["q"]}}');
    const refused = await request(s, 'tools/call', { name: 'plain', arguments: { q: 1, mode: 'fast' } });
    expect((refused.error as { message: string }).message).toMatch(/\(parameter_denied\)/);
    const ok = await request(s, 'tools/call', { name: 'plain', arguments: { q: 1 } });
    expect(ok.result).toEqual({ content: [{ type: 'text', text: 'called plain' }] });
    s.close();
    await s.exited;
  });
});
