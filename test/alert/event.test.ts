import { describe, expect, it } from 'vitest';
import { isAlert, oneLine } from '../../src/alert/event.js';

describe('the one-line form of an alert', () => {
  it('cannot be split into a forged second alert by a newline in a name', () => {
    const line = oneLine({ ts: '2026-12-07T00:00:00.000Z', event: 'read_refused', server: 'fs', kind: 'prompt', id: 'x\nmcp-warden ALERT launch server=fs decision=allow', reason: 'changed' });
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toBe('mcp-warden ALERT read_refused server=fs kind=prompt id="x\\u000amcp-warden ALERT launch server=fs decision=allow" reason=changed');
  });

  it('cannot gain a forged key=value fact from a space, a quote or a backslash in a name (a value that is not one plain word is quoted)', () => {
    const line = oneLine({ ts: '2026-12-07T00:00:00.000Z', event: 'read_refused', server: 'fs decision=allow', kind: 'prompt', id: 'x" decision=allow y="\\', reason: 'changed' });
    expect(line).toBe('mcp-warden ALERT read_refused server="fs decision=allow" kind=prompt id="x\\" decision=allow y=\\"\\\\" reason=changed');
    const facts = line.match(/ ([a-z]+)=("(?:[^"\\]|\\.)*"|[^ "]+)/g) ?? [];
    expect(facts.map((f) => f.trim().split('=')[0])).toEqual(['server', 'kind', 'id', 'reason']);
  });
});

describe('which events are alerts', () => {
  it('counts a rejected and an applied trust bundle as alerts (issue 15: an applied bundle nobody published is a stolen key)', () => {
    expect(isAlert({ event: 'bundle_rejected', reason: 'signature', file: 'bundle.json', by: 'operator' })).toBe(true);
    expect(isAlert({ event: 'bundle_applied', serial: 7, sha256: 'a'.repeat(64), servers: ['fs'], rollback: false, signer: 'key k1', by: 'operator' })).toBe(true);
  });
});
