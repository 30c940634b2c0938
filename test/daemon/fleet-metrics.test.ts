import { describe, expect, it } from 'vitest';
import { WardenMetrics } from '../../src/daemon/metrics.js';

// The metrics a fleet reads, fed in-process: trust bundles, sweeps and the module guard, what each server is.

const text = (m: WardenMetrics): Promise<string> => m.registry.metrics();

describe('the metrics of trust bundles', () => {
  it('are absent on a host without a fleet source, so that no "bundle stale" alert fires there', async () => {
    const t = await text(new WardenMetrics());
    expect(t).not.toContain('mcp_warden_bundle_serial');
    expect(t).not.toContain('mcp_warden_bundle_applied_timestamp_seconds');
  });

  it('read 0 while a fleet source has applied no bundle yet', async () => {
    const m = new WardenMetrics();
    m.setBundle(null);
    expect(await text(m)).toMatch(/^mcp_warden_bundle_serial 0$/m);
    expect(await text(m)).toMatch(/^mcp_warden_bundle_applied_timestamp_seconds 0$/m);
  });

  it('take the serial and the time of a bundle_applied event', async () => {
    const m = new WardenMetrics();
    m.setBundle({ serial: 6, appliedAt: new Date(1_000_000) });
    const before = Date.now() / 1000;
    m.observe({ event: 'bundle_applied', serial: 7 });
    const t = await text(m);
    expect(t).toMatch(/^mcp_warden_bundle_serial 7$/m);
    expect(Number(/^mcp_warden_bundle_applied_timestamp_seconds (\S+)$/m.exec(t)?.[1])).toBeGreaterThanOrEqual(before);
  });

  it('count rejected bundles by reason', async () => {
    const m = new WardenMetrics();
    m.observe({ event: 'bundle_rejected', reason: 'serial_not_above' });
    m.observe({ event: 'bundle_rejected', reason: 'serial_not_above' });
    m.observe({ event: 'bundle_rejected', reason: 'signature' });
    const t = await text(m);
    expect(t).toContain('mcp_warden_bundles_rejected_total{reason="serial_not_above"} 2');
    expect(t).toContain('mcp_warden_bundles_rejected_total{reason="signature"} 1');
  });
});

describe('the metrics of sweeps and the module guard', () => {
  it('count swept orphans and refused modules per server', async () => {
    const m = new WardenMetrics();
    m.observe({ event: 'orphan_killed', server: 'fs', pgid: 10, pids: [10], gone: true });
    m.observe({ event: 'module_refused', server: 'fs', pid: 11, module: '/tmp/evil.js' });
    const t = await text(m);
    expect(t).toContain('mcp_warden_orphans_killed_total{server="fs"} 1');
    expect(t).toContain('mcp_warden_modules_refused_total{server="fs"} 1');
    expect(t).not.toContain('/tmp/evil.js');
  });
});

describe('what the metrics say of each server', () => {
  it('is its posture, whether it is pinned and its verification interval, and forgets servers a reload removed', async () => {
    const m = new WardenMetrics();
    m.setServers({ fs: { posture: 'enforce', pinned: true, verifyEvery: 3600 }, memo: { posture: 'monitor', pinned: false, verifyEvery: 0 } });
    let t = await text(m);
    expect(t).toContain('mcp_warden_server_info{server="fs",posture="enforce",pinned="true"} 1');
    expect(t).toContain('mcp_warden_server_info{server="memo",posture="monitor",pinned="false"} 1');
    expect(t).toContain('mcp_warden_verify_interval_seconds{server="fs"} 3600');
    expect(t).not.toContain('mcp_warden_verify_interval_seconds{server="memo"}');
    m.setServers({ memo: { posture: 'monitor', pinned: false, verifyEvery: 0 } });
    t = await text(m);
    expect(t).not.toContain('server="fs"');
  });

  it("is the first-trust scan's findings standing in its lock, by severity, and none for a server not pinned", async () => {
    const m = new WardenMetrics();
    m.setServers({ fs: { posture: 'enforce', pinned: true, verifyEvery: 0, findings: { high: 2, medium: 1, low: 0 } }, memo: { posture: 'monitor', pinned: false, verifyEvery: 0 } });
    const t = await text(m);
    expect(t).toContain('mcp_warden_surface_findings{server="fs",severity="high"} 2');
    expect(t).toContain('mcp_warden_surface_findings{server="fs",severity="medium"} 1');
    expect(t).not.toContain('mcp_warden_surface_findings{server="memo"');
  });

  it('counts the stalled loops of the daemon at each scrape', async () => {
    let stalled = 0;
    const m = new WardenMetrics(new Date(5_000), () => stalled);
    expect(await text(m)).toMatch(/^mcp_warden_daemon_stalled_loops 0$/m);
    stalled = 2;
    expect(await text(m)).toMatch(/^mcp_warden_daemon_stalled_loops 2$/m);
    expect(await text(m)).toMatch(/^mcp_warden_daemon_start_time_seconds 5$/m);
  });
});

describe('the metric of a read.deny way replaced', () => {
  it('counts sandbox_deny_replaced per server, never its path', async () => {
    const m = new WardenMetrics();
    m.observe({ event: 'sandbox_deny_replaced', server: 'notes', path: '/srv/notes/.env' });
    m.observe({ event: 'sandbox_deny_replaced', server: 'notes', path: '/srv/notes/.env' });
    const t = await text(m);
    expect(t).toContain('mcp_warden_sandbox_deny_replaced_total{server="notes"} 2');
    expect(t).not.toContain('/srv/notes');
  });
});
