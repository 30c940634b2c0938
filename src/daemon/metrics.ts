import { Counter, Gauge, Histogram, Registry } from 'prom-client';

// Prometheus metrics of the daemon, per server: launches by decision, refusals by code, drift, canaries and
// their latency, last verification time, binary changes, rules changes; and the daemon's digest cache hits and misses.

export class WardenMetrics {
  readonly registry = new Registry();
  private readonly launches = new Counter({ name: 'mcp_warden_launches_total', help: 'Launches by decision', labelNames: ['server', 'decision'], registers: [this.registry] });
  private readonly refusals = new Counter({ name: 'mcp_warden_refusals_total', help: 'Refused launches by error code', labelNames: ['server', 'code'], registers: [this.registry] });
  private readonly drift = new Counter({ name: 'mcp_warden_drift_events_total', help: 'Surface listings judged changed', labelNames: ['server', 'source'], registers: [this.registry] });
  private readonly refusedCalls = new Counter({ name: 'mcp_warden_calls_refused_total', help: 'tools/call refused in-band', labelNames: ['server'], registers: [this.registry] });
  private readonly widening = new Counter({ name: 'mcp_warden_tier_widening_blocked_total', help: 'Tools blocked for widening their tier', labelNames: ['server'], registers: [this.registry] });
  private readonly canaries = new Counter({ name: 'mcp_warden_canary_runs_total', help: 'Canary evaluations by result', labelNames: ['server', 'probe', 'result'], registers: [this.registry] });
  private readonly canaryLatency = new Histogram({ name: 'mcp_warden_canary_median_seconds', help: 'Median canary latency per evaluation', labelNames: ['server', 'probe'], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 1], registers: [this.registry] });
  private readonly binaryChanged = new Counter({ name: 'mcp_warden_binary_changed_total', help: 'Allowlisted artifacts found changed by the watcher', labelNames: ['server'], registers: [this.registry] });
  private readonly rulesChanged = new Counter({ name: 'mcp_warden_rules_changed_total', help: "Changes of a server's operator rules found by the daemon outside the CLI (via outside_cli)", labelNames: ['server', 'via'], registers: [this.registry] });
  readonly lastVerification = new Gauge({ name: 'mcp_warden_last_verification_timestamp_seconds', help: 'When a surface of the server was last verified', labelNames: ['server'], registers: [this.registry] });
  readonly cacheHits = new Gauge({ name: 'mcp_warden_digest_cache_hits', help: 'Digest cache hits of the daemon', registers: [this.registry] });
  readonly cacheMisses = new Gauge({ name: 'mcp_warden_digest_cache_misses', help: 'Digest cache misses of the daemon', registers: [this.registry] });

  /** Counts one audit-shaped event, from the daemon itself or from a `run`. */
  observe(e: Record<string, unknown>): void {
    const server = typeof e.server === 'string' ? e.server.slice(0, 64) : '';
    switch (e.event) {
      case 'launch':
        this.launches.inc({ server, decision: String(e.decision) });
        if (e.decision === 'refuse') this.refusals.inc({ server, code: String(e.code ?? 'unknown') });
        break;
      case 'surface':
        this.lastVerification.set({ server }, Date.now() / 1000);
        if (e.pinState === 'changed') this.drift.inc({ server, source: String(e.source) });
        break;
      case 'call_refused':
      case 'read_refused':
        this.refusedCalls.inc({ server });
        break;
      case 'tier_widening_blocked':
        this.widening.inc({ server });
        break;
      case 'canary':
        this.canaries.inc({ server, probe: String(e.probe).slice(0, 64), result: String(e.result) });
        if (typeof e.medianMs === 'number') this.canaryLatency.observe({ server, probe: String(e.probe).slice(0, 64) }, e.medianMs / 1000);
        break;
      case 'binary_changed':
        this.binaryChanged.inc({ server });
        break;
      case 'rules_changed':
        this.rulesChanged.inc({ server, via: String(e.via) });
        break;
    }
  }
}
