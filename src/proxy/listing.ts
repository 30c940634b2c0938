import { ListingAdmitter, type LiveTool, type SurfaceCaps } from '../surface/admit.js';
import type { ServerChannel } from './channel.js';

/** Lists every page of the server's tools with the warden's own requests, admitting each page as it comes. */
export async function listAllTools(channel: ServerChannel, caps: SurfaceCaps): Promise<LiveTool[]> {
  const admitter = new ListingAdmitter(caps);
  let cursor: string | undefined;
  do {
    cursor = admitter.page(await channel.request('tools/list', cursor === undefined ? {} : { cursor }));
  } while (cursor !== undefined);
  return admitter.tools;
}
