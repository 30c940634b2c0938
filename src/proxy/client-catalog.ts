import { readJson, type JsonObject, type JsonValue } from '../protocol/json/reader.js';
import { serialize } from '../protocol/json/write.js';
import { InadmissibleError, printable } from '../surface/admit.js';
import { CATALOGS, CatalogAdmitter, type CatalogKind } from '../surface/catalog.js';
import type { ClientRequest } from './channel.js';
import type { SurfaceJudge } from './judge.js';
import type { SessionConfig } from './session-config.js';
import { answerRefused } from './refusal-text.js';

// The client's own prompts/list, resources/list and resources/templates/list pages, judged on their way like its
// tools/list pages (client-listing.ts): an item that does not match the lock is removed (enforce), and gets or
// reads of it are refused from then on; a page that cannot be admitted is answered with an error.

/** Items reported removed from a client's page, one line each, in a session; past it, none. */
const REPORTED = 10;

/** The catalog a listing method pages, or undefined for any other method. */
export function catalogOf(method: string): CatalogKind | undefined {
  return CATALOGS.find((k) => k.method === method);
}

export class ClientCatalogPages {
  private reported = 0;

  constructor(
    private readonly cfg: Pick<SessionConfig, 'serverId' | 'caps' | 'report'>,
    /** Audits and reports a refused page, up to a cap per session (server-reports.ts). */
    private readonly pageRefused: (reason: string, method: string) => void,
  ) {}

  /** The bytes to forward for one page (`bytes` already carry the client's id). */
  judge(judge: SurfaceJudge, k: CatalogKind, value: Map<string, JsonValue>, request: ClientRequest, bytes: Buffer): Buffer {
    const { serverId } = this.cfg;
    const result = value.get('result');
    if (result === undefined) return bytes;
    const admitter = new CatalogAdmitter(k, this.cfg.caps);
    try {
      admitter.page(result);
    } catch (err) {
      if (!(err instanceof InadmissibleError)) throw err;
      this.pageRefused(err.reason, k.method);
      return answerRefused(request.clientId, serverId, `this ${k.method} page`, 'inadmissible', { code: 'inadmissible', ...(err.said ? { words: err.said } : {}) });
    }
    const items = (result as JsonObject).get(k.key) as JsonObject[];
    const kept = items.filter((item) => {
      const id = item.get(k.id) as string;
      if (judge.reads.pageItem(k.kind, id, admitter.items[id] as string)) return true;
      if (this.reported++ < REPORTED) this.cfg.report(`server '${serverId}': ${k.kind} "${printable(id)}" in the client's ${k.method} does not match the lock; removed from it, and refused on this session. Review with: mcp-warden diff ${serverId}`);
      return false;
    });
    if (kept.length === items.length) return bytes;
    const rewritten = new Map(value);
    rewritten.set('id', readJson(request.clientId));
    rewritten.set('result', new Map([...(result as JsonObject)].map(([key, v]) => [key, key === k.key ? kept : v])));
    return Buffer.from(serialize(rewritten) + '\n');
  }
}
