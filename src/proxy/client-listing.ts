import { readJson, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import { InadmissibleError, ListingAdmitter, type SurfaceCaps } from '../surface/admit.js';
import type { ClientRequest } from './channel.js';
import type { SurfaceJudge } from './judge.js';
import type { CallRules } from './call-rules.js';
import { answerRefused } from './refusal-text.js';

/**
 * Judges one page of a tools/list response on its way to the client and returns the bytes to forward: the
 * original bytes when every tool is approved; otherwise the message re-serialized (member order and number
 * lexemes kept, the client's id restored) without the tools that are not; an error instead of a page that
 * cannot be admitted. `bytes` already carry the client's id.
 */
export function judgeClientPage(
  judge: SurfaceJudge,
  value: Map<string, JsonValue>,
  request: ClientRequest,
  bytes: Buffer,
  cfg: { serverId: string; caps: SurfaceCaps; pageRefused: (reason: string) => void },
  rules?: CallRules,
): Buffer {
  const result = value.get('result');
  if (result === undefined) return bytes;
  let tools;
  try {
    const admitter = new ListingAdmitter(cfg.caps);
    admitter.page(result);
    tools = admitter.tools;
  } catch (err) {
    if (!(err instanceof InadmissibleError)) throw err;
    cfg.pageRefused(err.reason); // audited and reported, up to a cap per session (server-reports.ts)
    return answerRefused(request.clientId, cfg.serverId, 'this tools/list page', 'inadmissible', { code: 'inadmissible', ...(err.said ? { words: err.said } : {}) });
  }
  const decisions = judge.judge(tools, 'client_list', true);
  const keep = tools.filter((t) => decisions.tools.get(t.name)?.decision === 'allow');
  // The operator's rules then withhold tools and change how the kept ones are shown.
  const shown = rules ? rules.page(keep) : { values: keep.map((t) => t.value), changed: false };
  if (keep.length === tools.length && !shown.changed) return bytes;
  const rewritten = new Map(value);
  rewritten.set('id', readJson(request.clientId));
  rewritten.set('result', new Map([...(result as JsonObject)].map(([k, v]) => [k, k === 'tools' ? shown.values : v])));
  return Buffer.from(serialize(rewritten) + '\n');
}
