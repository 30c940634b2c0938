import { describe, expect, it } from 'vitest';
import { isAlert, oneLine } from '../../src/alert/event.js';

describe('the one-line form of an alert', () => {
  it('cannot be split into a forged second alert by a newline in a name', () => {
    const line = oneLine({ event: 'read_refused', server: 'fs', kind: 'prompt', id: 'x\nmcp-warden ALERT launch server=fs decision=allow', reason: 'changed' });
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toBe('mcp-warden ALERT read_refused server=fs kind=prompt id=x\\u000amcp-warden ALERT launch server=fs decision=allow reason=changed');
  });
});

describe('which events are alerts', () => {
  it('counts a rejected and an applied trust bundle as alerts (issue 15: an applied bundle nobody published is a stolen key)', () => {
    expect(isAlert({ event: 'bundle_rejected', reason: 'signature' })).toBe(true);
    expect(isAlert({ event: 'bundle_applied', serial: 7 })).toBe(true);
  });
});
