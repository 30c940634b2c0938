import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, auditEvents, cli, tempDir } from '../helpers/warden.js';

// An event over the 64 KiB line cap is written as a marker that still names the event and the server, says how
// large the event was, and keeps as much of its largest list as fits, with how many items were dropped.

const { appendAudit } = (await import(path.join(ROOT, 'dist/audit/log.js'))) as {
  appendAudit: (file: string, event: Record<string, unknown>) => Promise<string>;
};

let home: string;
beforeEach(() => {
  home = tempDir();
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

describe('an audit event over the line cap', () => {
  it('keeps the event name, the server, the byte count and the counts of its largest list', async () => {
    const file = path.join(home, 'audit.log');
    const changed = Array.from({ length: 10_000 }, (_, i) => ({ name: `tool-${i}`, state: 'added', classes: ['added'], fields: [], decision: 'hide' }));
    await appendAudit(file, { event: 'launch', server: 'before', decision: 'allow', reason: 'ok' });
    const line = await appendAudit(file, { event: 'surface', server: 'big-one', source: 'handshake', pinState: 'changed', surfaceHash: 'sha256:x', revision: '2025-06-18', changed });
    await appendAudit(file, { event: 'exit', server: 'after' });
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(64 * 1024);
    const marker = auditEvents(home)[1] as Record<string, unknown> & { changed: unknown[]; truncation: Record<string, unknown> };
    expect(marker).toMatchObject({ event: 'surface', server: 'big-one', source: 'handshake', pinState: 'changed', truncated: true });
    expect(marker.truncation).toMatchObject({ limit: 65536, field: 'changed', items: 10_000 });
    expect(marker.truncation.bytes).toBeGreaterThan(64 * 1024);
    expect(marker.truncation.kept).toBe(marker.changed.length);
    expect(marker.truncation.dropped).toBe(10_000 - marker.changed.length);
    expect(marker.changed.length).toBeGreaterThan(100); // as much of the list as fits, not nothing
    expect(marker.changed[0]).toEqual(changed[0]);
    expect(cli(home, ['audit', 'verify']).code).toBe(0);
  });

  it('falls back to a minimal marker that still names the event and the server when no list can be cut', async () => {
    const file = path.join(home, 'audit.log');
    await appendAudit(file, { event: 'verify_failed', server: 'srv', code: 'X', reason: 'r'.repeat(100_000) });
    const [marker] = auditEvents(home) as (Record<string, unknown> & { truncation: Record<string, unknown> })[];
    expect(marker).toMatchObject({ event: 'verify_failed', server: 'srv', code: 'X', truncated: true });
    expect(marker?.truncation.bytes).toBeGreaterThan(100_000);
    expect(cli(home, ['audit', 'verify']).code).toBe(0);
  });
});
