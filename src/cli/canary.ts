import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { loadServers } from '../store/servers.js';
import { checkCanaries, recordCanaries } from '../supervise/canaries.js';
import { recorder } from '../supervise/recorder.js';
import { line, printJson } from './output.js';
import { escaped } from '../escape.js';

// `canary record <id>` pins each probe's answer and latency envelope on a fresh launch; `canary check <id>` runs
// them again out of band and compares (exit 1 on a failed canary). The runs are supervise/canaries.ts.

const say = (m: string): void => void process.stderr.write(`mcp-warden: ${escaped(m)}\n`);

export async function canaryRecordVerb(homeFlag: string | undefined, id: string): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const baselines = await recordCanaries(paths, id);
  for (const [name, b] of Object.entries(baselines)) {
    line(escaped(`${id}/${name}: ${b.shape.kind === 'error' ? `JSON-RPC error ${b.shape.code}` : b.shape.isError ? 'isError result' : 'result'}, text ${b.h_text.slice(0, 23)}…, latency p50 ${b.p50_ms} ms, p95 ${b.p95_ms} ms, max ${b.max_ms} ms (${b.samples} samples)`));
  }
  return 0;
}

export async function canaryCheckVerb(homeFlag: string | undefined, id: string, json: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const rec = recorder(paths, loadServers(paths).alerts, say);
  const verdicts = await checkCanaries(paths, id, rec, 'check');
  await rec.flush();
  const failed = verdicts.filter((v) => !v.verdict || !v.verdict.pass);
  if (json) printJson({ server: id, pass: failed.length === 0, canaries: verdicts.map((v) => ({ name: v.name, ...(v.verdict ?? { pass: false, failed: ['no baseline'] }) })) });
  else {
    for (const v of verdicts) {
      if (!v.verdict) line(escaped(`${id}/${v.name}: NO BASELINE (run: mcp-warden canary record ${id})`));
      else line(escaped(`${id}/${v.name}: ${v.verdict.pass ? 'pass' : `FAIL (${v.verdict.failed.join(', ')})`}: median ${v.verdict.medianMs} ms, limit ${v.verdict.thresholdMs} ms`));
    }
  }
  return failed.length === 0 ? 0 : 1;
}
