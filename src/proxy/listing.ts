import { ListingAdmitter, type Handshake, type LiveTool, type SurfaceCaps } from '../surface/admit.js';
import { CATALOGS, CatalogAdmitter, type Catalogs, type ServedCatalogs } from '../surface/catalog.js';
import type { ServerChannel } from './channel.js';

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
    let cursor: string | undefined;
    do {
      cursor = admitter.page(await channel.request(k.method, cursor === undefined ? {} : { cursor }));
    } while (cursor !== undefined);
    for (const m of admitter.otherMembers) otherMembers?.push(`${k.method} ${m}`);
    out[k.kind] = admitter.items;
    if (served && admitter.served) served[k.kind] = admitter.served;
  }
  return out;
}
