import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { wardenVersion } from './version.js';

// Prometheus metrics of the daemon, per server: launches by decision, refusals by code, drift, canaries and
// their latency, last verification time, binary changes, rules changes, orphan sweeps, refused modules, sandbox
// denials; the daemon's version, start time, stalled loops and digest cache; what a fleet needs to know of each server
// (posture, pinned, verification interval); and signed trust bundles. Labels hold server ids, event codes and
// the version, never paths, commands, arguments or environment values (docs/operations.md, "Running a fleet").

/** What the daemon says of each configured server: nothing from its command, arguments or environment. */
export interface ServerFacts {
  posture: string;
  pinned: boolean;
  verifyEvery: number;
  /** The first-trust scan of what tools.lock holds (issue 30), by severity; absent when not pinned. */
  findings?: Record<'high' | 'medium' | 'low', number>;
}

const BUNDLE_SERIAL = 'mcp_warden_bundle_serial';
const BUNDLE_APPLIED = 'mcp_warden_bundle_applied_timestamp_seconds';
const BUNDLE_CHECKED = 'mcp_warden_bundle_checked_timestamp_seconds';
const label = (v: unknown): string => String(v).slice(0, 64);

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
  private readonly orphans = new Counter({ name: 'mcp_warden_orphans_killed_total', help: 'Sessions left by a dead supervisor that the daemon swept', labelNames: ['server'], registers: [this.registry] });
  private readonly modules = new Counter({ name: 'mcp_warden_modules_refused_total', help: 'Node servers ended by the module guard for loading code outside their attested set', labelNames: ['server'], registers: [this.registry] });
  private readonly sandboxDenied = new Counter({ name: 'mcp_warden_sandbox_denied_total', help: "What a confined server's sandbox refused at run time (kind connect: its network proxy; kind read: a decoy read; kind write: a write the kernel refused, seen by bpftrace), recorded up to 64 a session", labelNames: ['server', 'kind'], registers: [this.registry] });
  private readonly denyReplaced = new Counter({ name: 'mcp_warden_sandbox_deny_replaced_total', help: "Sessions ended because a name the hiding of a read.deny path leaves on the host's side (a grant outside the hidden places, or a directory above it) was replaced", labelNames: ['server'], registers: [this.registry] });
  readonly lastVerification = new Gauge({ name: 'mcp_warden_last_verification_timestamp_seconds', help: 'When a surface of the server was last verified', labelNames: ['server'], registers: [this.registry] });
  readonly cacheHits = new Gauge({ name: 'mcp_warden_digest_cache_hits', help: 'Digest cache hits of the daemon', registers: [this.registry] });
  readonly cacheMisses = new Gauge({ name: 'mcp_warden_digest_cache_misses', help: 'Digest cache misses of the daemon', registers: [this.registry] });
  private readonly build = new Gauge({ name: 'mcp_warden_build_info', help: 'Always 1; the version of mcp-warden in its label', labelNames: ['version'], registers: [this.registry] });
  private readonly started = new Gauge({ name: 'mcp_warden_daemon_start_time_seconds', help: 'When the daemon started (a change is a restart)', registers: [this.registry] });
  private readonly stalled: Gauge = new Gauge({ name: 'mcp_warden_daemon_stalled_loops', help: 'Loops and tasks of the daemon that make no progress (the systemd watchdog is withheld while above 0)', registers: [this.registry], collect: () => this.stalled.set(this.stalledLoops()) });
  private readonly serverInfo = new Gauge({ name: 'mcp_warden_server_info', help: 'Always 1 per configured server: its posture, and whether tools.lock pins its surface', labelNames: ['server', 'posture', 'pinned'], registers: [this.registry] });
  private readonly findings = new Gauge({ name: 'mcp_warden_surface_findings', help: 'First-trust scan findings standing in what tools.lock holds of the server, by severity (mcp-warden scan ID)', labelNames: ['server', 'severity'], registers: [this.registry] });
  private readonly verifyInterval = new Gauge({ name: 'mcp_warden_verify_interval_seconds', help: 'verifyEvery of the server (absent when 0: never verified on a schedule)', labelNames: ['server'], registers: [this.registry] });
  // Registered by setBundle only: a gauge without labels would otherwise read 0 on every host, fleet or not.
  private readonly bundleSerial = new Gauge({ name: BUNDLE_SERIAL, help: 'Serial of the last applied trust bundle (0: none yet); only with a fleet source', registers: [] });
  private readonly bundleApplied = new Gauge({ name: BUNDLE_APPLIED, help: 'When the last trust bundle was applied (0: none yet); only with a fleet source', registers: [] });
  private readonly bundleChecked = new Gauge({ name: BUNDLE_CHECKED, help: 'When the fleet source last served a verified bundle that is now the applied one (0: not yet); only with a fleet source', registers: [] });
  private readonly bundlesRejected = new Counter({ name: 'mcp_warden_bundles_rejected_total', help: 'Trust bundles refused, by reason', labelNames: ['reason'], registers: [this.registry] });

  /** `stalledLoops` is read at each scrape (the daemon's Progress). */
  constructor(
    startedAt: Date = new Date(),
    private readonly stalledLoops: () => number = () => 0,
  ) {
    this.build.set({ version: wardenVersion() }, 1);
    this.started.set(startedAt.getTime() / 1000);
  }

  /** The configured servers (at start and after each reload): servers that are gone lose their series. */
  setServers(servers: Record<string, ServerFacts>): void {
    this.serverInfo.reset();
    this.verifyInterval.reset();
    this.findings.reset();
    for (const [id, s] of Object.entries(servers)) {
      this.serverInfo.set({ server: label(id), posture: label(s.posture), pinned: String(s.pinned) }, 1);
      for (const [severity, n] of Object.entries(s.findings ?? {})) this.findings.set({ server: label(id), severity }, n);
      if (s.verifyEvery > 0) this.verifyInterval.set({ server: label(id) }, s.verifyEvery);
    }
  }

  /** For the fleet source: the last applied bundle at start (`null`: none yet, which exports 0 so that the
   *  "bundle stale" alert fires), or nothing (`undefined`: no fleet source, no bundle series). */
  setBundle(last: { serial: number; appliedAt: Date } | null | undefined): void {
    const shown = this.registry.getSingleMetric(BUNDLE_SERIAL) !== undefined;
    if (last === undefined) {
      for (const name of [BUNDLE_SERIAL, BUNDLE_APPLIED, BUNDLE_CHECKED]) this.registry.removeSingleMetric(name);
      return;
    }
    if (!shown) {
      for (const g of [this.bundleSerial, this.bundleApplied, this.bundleChecked]) this.registry.registerMetric(g);
      this.bundleChecked.set(0);
    }
    this.bundleSerial.set(last?.serial ?? 0);
    this.bundleApplied.set(last ? last.appliedAt.getTime() / 1000 : 0);
  }

  /** The fleet source served the applied bundle (just applied, or unchanged since): the source is reachable and
   *  current. Only shown with a fleet source (setBundle). */
  setBundleChecked(at: Date): void {
    this.bundleChecked.set(at.getTime() / 1000);
  }

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
        this.canaries.inc({ server, probe: label(e.probe), result: String(e.result) });
        if (typeof e.medianMs === 'number') this.canaryLatency.observe({ server, probe: label(e.probe) }, e.medianMs / 1000);
        break;
      case 'binary_changed':
        this.binaryChanged.inc({ server });
        break;
      case 'rules_changed':
        this.rulesChanged.inc({ server, via: String(e.via) });
        break;
      case 'orphan_killed':
        this.orphans.inc({ server });
        break;
      case 'module_refused':
        this.modules.inc({ server });
        break;
      case 'sandbox_denied':
        this.sandboxDenied.inc({ server, kind: label(e.kind) });
        break;
      case 'sandbox_deny_replaced':
        this.denyReplaced.inc({ server });
        break;
      case 'bundle_applied':
        if (typeof e.serial === 'number') this.setBundle({ serial: e.serial, appliedAt: new Date() });
        break;
      case 'bundle_rejected':
        this.bundlesRejected.inc({ reason: label(e.reason) });
        break;
    }
  }
}
