import { ListingAdmitter, type Handshake, type LiveTool, type SurfaceCaps } from '../surface/admit.js';
import { CATALOGS, CatalogAdmitter, type Catalogs, type ServedCatalogs } from '../surface/catalog.js';
import type { ServerChannel } from './channel.js';
import { JsonNumber, type JsonObject, type JsonValue } from '../protocol/json/reader.js';

/** Lists every page of the server's tools with the warden's own requests, admitting each page as it comes;
 *  `otherMembers` gets "tools/list <member>" for each member of a page's result beside its tools and cursor. */
export async function listAllTools(channel: ServerChannel, caps: SurfaceCaps, otherMembers?: string[]): Promise<LiveTool[]> {
  const admitter = new ListingAdmitter(caps);
  let cursor: string | undefined;
  do {
    cursor = admitter.page(await channel.request('tools/list', cursor === undefined ? {} : { cursor }));
  } while (cursor !== undefined);
  for (const m of admitter.otherMembers) otherMembers?.push(`tools/list ${m}`);
  return admitter.tools;
}

/** Lists and digests the prompts, resources and resource templates the server advertises; with `served` (out of
 *  band only), keeps each item's text there too. */
export async function listCatalogs(channel: ServerChannel, hs: Handshake, caps: SurfaceCaps, otherMembers?: string[], served?: ServedCatalogs): Promise<Catalogs> {
  const out: Catalogs = {};
  for (const k of CATALOGS) {
    if (!hs.serves?.[k.capability]) continue;
    const admitter = new CatalogAdmitter(k, caps, served !== undefined);
    // A server that advertises the capability and answers the listing's first page "method not found" lists
    // nothing of that kind (mcp-server-kubernetes has resources and no resources/templates/list): an empty
    // catalog, judged as one, not a surface that cannot be fetched. Any other error, or on a later page, is one.
    const first = await channel.requestMessage(k.method, {});
    if (methodNotFound(first)) {
      out[k.kind] = admitter.items;
      if (served) served[k.kind] = Object.create(null) as Record<string, string>;
      continue;
    }
    let cursor: string | undefined = admitter.page(await resultOf(first, channel, k.method));
    while (cursor !== undefined) cursor = admitter.page(await channel.request(k.method, { cursor }));
    for (const m of admitter.otherMembers) otherMembers?.push(`${k.method} ${m}`);
    out[k.kind] = admitter.items;
    if (served && admitter.served) served[k.kind] = admitter.served;
  }
  return out;
}

function methodNotFound(response: JsonObject): boolean {
  const error = response.get('error');
  const code = error instanceof Map ? error.get('code') : undefined;
  return code instanceof JsonNumber && code.lexeme === '-32601' && !response.has('result');
}

/** The result of a response already received, or its error raised as `channel.request` raises it. */
async function resultOf(response: JsonObject, channel: ServerChannel, method: string): Promise<JsonValue | undefined> {
  if (response.get('error') === undefined) return response.get('result');
  return channel.raise(method, response);
}
