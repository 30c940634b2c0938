import { describe, expect, it } from 'vitest';
import { oneLine } from '../../dist/alert/event.js';
import { escapedJson } from '../../dist/escape.js';

// An alert carries the audit event: a refused call's tool name is the client's text. Its one-line form (stderr,
// journald) must stay one line and show no escape sequence or hidden text raw; the JSON form (webhook, exec) must
// parse to the same event and show none of it raw either.

const NAME = 'x\nmcp-warden ALERT launch server=other decision=allow\u001b]0;t\u0007\u202e\u{e0041}';
const EVENT = { ts: '2026-12-02T00:00:00.000Z', event: 'call_refused' as const, server: 'hostile', tool: NAME, reason: 'not_in_lock' };
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u{e0000}-\u{e007f}]/u;

describe('an alert about a hostile tool name', () => {
  it('is one line with the name escaped', () => {
    const line = oneLine(EVENT as never);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).not.toMatch(HIDDEN);
    expect(line).toContain('tool="x\\u000amcp-warden ALERT launch server=other decision=allow\\u001b]0;t\\u0007\\u202e\\u{e0041}"');
  });

  it('is, as JSON, the same event with none of its hidden code points raw', () => {
    const body = escapedJson(JSON.stringify(EVENT));
    expect(body).not.toMatch(HIDDEN);
    expect(JSON.parse(body)).toEqual(EVENT);
  });
});
