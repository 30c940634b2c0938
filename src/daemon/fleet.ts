import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BundleEvent } from '../audit/bundle-events.js';
import { WardenError } from '../error.js';
import { fetchBundle } from '../fleet/fetch.js';
import { loadBundleState } from '../store/bundle/state.js';
import type { Sandbox } from '../sandbox/schema.js';
import { describeSource, type FleetConfig } from '../store/fleet-config.js';
import type { HomePaths } from '../store/paths.js';
import type { ServersFile } from '../store/servers.js';
import type { Recorder } from '../supervise/recorder.js';
import type { FleetApplyJob, FleetWorkerMessage } from './fleet-worker.js';
import type { WardenMetrics } from './metrics.js';
import type { Progress } from './progress.js';

// The daemon's fleet source (servers.json "fleet", docs/operations.md "Running a fleet"): at start, every
// `interval` seconds and on SIGHUP, fetch the bundle and its signature into a private scratch directory inside the
// home, and hand them to applyBundle (in a worker). The same bundle as the one applied last (by sha256) is nothing
// to do; anything else is applied only when it verifies, or refused with nothing changed. Every refusal, from the
// fetch to the apply, is a `bundle_rejected` event (audit, alert sinks, bundles_rejected_total{reason}).

const LOOP = 'fleet source';
const APPLY_MAX_MS = 5 * 60_000;
const SCRATCH_PREFIX = 'fleet-';
const BY = 'daemon fleet';

export interface FleetHooks {
  /** The daemon's own apply is writing the trust files: hold the watcher's reloads (true) or release them (false). */
  applying(on: boolean): void;
  /** A bundle was applied: reload the configuration. */
  applied(serial: number): Promise<void>;
}

export class FleetSource {
  private config: FleetConfig | undefined;
  private configKey = '';
  private trustedPath = '';
  private sandboxes: Record<string, Sandbox | undefined> = {};
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly paths: HomePaths,
    private readonly rec: Recorder,
    private readonly metrics: WardenMetrics,
    private readonly progress: Progress,
    private readonly say: (m: string) => void,
    private readonly hooks: FleetHooks,
  ) {
    // Scratch directories a killed daemon left behind.
    for (const name of safeReaddir(paths.cacheDir)) if (name.startsWith(SCRATCH_PREFIX)) fs.rmSync(path.join(paths.cacheDir, name), { recursive: true, force: true });
  }

  /** Takes the fleet section of a configuration that loaded (at start and after each reload). */
  configure(servers: ServersFile): void {
    // git is looked up where no server may write (nor a link into where one may): what a confined server writes is
    // owned by the daemon's user (fleet/fetch-git.ts findGit).
    this.trustedPath = servers.path;
    this.sandboxes = Object.fromEntries(Object.entries(servers.servers).map(([id, s]) => [id, s.sandbox]));
    const key = servers.fleet ? JSON.stringify(servers.fleet) : '';
    if (key !== this.configKey) {
      this.configKey = key;
      this.config = servers.fleet;
      clearInterval(this.timer);
      this.timer = undefined;
      if (this.config) {
        this.timer = setInterval(() => this.request(), this.config.interval * 1000);
        // A round that never ends (a hung apply) shows as stalled; the fetch itself is bounded by its timeout.
        this.progress.expectEvery(LOOP, (2 * this.config.interval + this.config.timeout) * 1000 + APPLY_MAX_MS);
        this.say(`fleet source ${describeSource(this.config.source)}: fetched every ${this.config.interval} s and on SIGHUP`);
      } else this.progress.forget(LOOP);
    }
    this.metrics.setBundle(this.config ? this.lastApplied() : undefined);
  }

  /** Fetches now (coalesced: a request during a round runs one more round after it). */
  request(): void {
    if (!this.config || this.stopping.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.round().catch((err: Error) => this.say(`fleet source: the round failed unexpectedly: ${err.message}`));
        this.progress.beat(LOOP);
      } while (this.again && !this.stopping.signal.aborted);
    })().finally(() => (this.running = undefined));
  }

  /** Stops the schedule, aborts a fetch in flight and waits for the round (an apply in progress completes). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort('stopped');
    await this.running;
  }

  private lastApplied(): { serial: number; appliedAt: Date } | null {
    try {
      const a = loadBundleState(this.paths).applied;
      return a ? { serial: a.serial, appliedAt: new Date(a.at) } : null;
    } catch (err) {
      this.say(`fleet source: ${(err as Error).message}`);
      return null;
    }
  }

  private reject(code: string, message: string, where: string, serial?: number): void {
    this.say(`fleet source ${where}: refused (${code}): ${message}`);
    this.rec.record({ event: 'bundle_rejected', reason: code, ...(serial !== undefined ? { serial } : {}), file: where, by: BY });
  }

  private async round(): Promise<void> {
    const cfg = this.config as FleetConfig;
    const where = describeSource(cfg.source);
    fs.mkdirSync(this.paths.cacheDir, { recursive: true, mode: 0o700 });
    const scratch = fs.mkdtempSync(path.join(this.paths.cacheDir, SCRATCH_PREFIX)); // mode 0700
    try {
      const fetching = this.progress.begin(`fleet fetch from ${cfg.source.type}`, (cfg.timeout + 30) * 1000);
      let fetched;
      try {
        fetched = await fetchBundle(cfg.source, cfg.timeout, scratch, { trustedPath: this.trustedPath, sandboxes: this.sandboxes }, this.stopping.signal);
      } catch (err) {
        if (!(err instanceof WardenError)) throw err;
        if (!this.stopping.signal.aborted) this.reject(err.code, err.message, where);
        return;
      } finally {
        fetching();
      }
      const sha256 = createHash('sha256').update(fetched.bundle).digest('hex');
      let last;
      try {
        last = loadBundleState(this.paths).applied;
      } catch (err) {
        if (!(err instanceof WardenError)) throw err;
        return this.reject(err.code, err.message, where);
      }
      // The bundle applied last, served again: nothing to do and nothing to say, at every interval.
      if (last?.sha256 === sha256) return this.metrics.setBundleChecked(new Date());
      const file = path.join(scratch, 'bundle.json');
      fs.writeFileSync(file, fetched.bundle, { mode: 0o600, flag: 'wx' });
      fs.writeFileSync(`${file}.sigstore.json`, fetched.signature, { mode: 0o600, flag: 'wx' });
      await this.apply({ paths: this.paths, file, fleet: cfg, now: new Date().toISOString() }, where);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }

  private async apply(job: FleetApplyJob, where: string): Promise<void> {
    const shown = (m: string): string => m.replaceAll(job.file, where);
    this.hooks.applying(true);
    const applying = this.progress.begin('fleet apply', APPLY_MAX_MS);
    type Done = Extract<FleetWorkerMessage, { done: unknown }>['done'];
    let done: Done;
    try {
      done = await new Promise<Done>((resolve, reject) => {
        const worker = new Worker(new URL('../daemon/fleet-worker.js', import.meta.url), { workerData: job });
        let result: Done | undefined;
        worker.on('message', (m: FleetWorkerMessage) => {
          if ('event' in m) this.record(m.event, where);
          else result = m.done;
        });
        worker.once('error', reject);
        worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`the fleet worker exited with code ${code} and no result`))));
      });
    } catch (err) {
      return this.reject('BUNDLE_APPLY_FAILED', `applying the fetched bundle failed: ${(err as Error).message}. Nothing was applied by this round; check the trust files with: mcp-warden status`, where);
    } finally {
      applying();
      this.hooks.applying(false);
    }
    if (done.ok === false) {
      const hint = done.code === 'BUNDLE_ENV_MISSING' ? ' The daemon takes values from this machine\'s servers.json, and from "fleet": {"env": {"SERVER": {"NAME": "VALUE"}}, "passEnv": {"SERVER": ["NAME"]}}.' : done.code === 'BUNDLE_ROLLBACK' ? ' The daemon never applies a rollback. To go back on purpose, publish the older content with a new serial (bundle create --serial); a bundle applied by hand with --allow-rollback holds only until the source publishes a newer serial than it.' : done.code === 'BUNDLE_SERVER_CONFLICT' ? ' To hand this machine\'s own server over to the fleet: "fleet": {"adopt": ["SERVER"]}.' : '';
      if (done.recorded) this.say(`fleet source ${where}: refused (${done.code}): ${shown(done.message)}${hint}`);
      else this.reject(done.code, shown(done.message), where);
      return;
    }
    this.metrics.setBundleChecked(new Date());
    this.say(`fleet source ${where}: applied trust bundle serial ${done.serial} (servers ${done.servers.join(', ')}).${done.unused.length ? ` Not used by this bundle: ${done.unused.join(', ')}.` : ''}`);
    await this.hooks.applied(done.serial);
  }

  /** An event of applyBundle, recorded by the daemon: `file` names the source, not the scratch copy. */
  private record(e: BundleEvent, where: string): void {
    this.rec.record(e.event === 'bundle_rejected' ? { ...e, file: where } : e);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
