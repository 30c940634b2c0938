import type { JsonValue } from '../../src/protocol/json/reader.js';
import { admitHandshake, type Handshake } from '../../src/surface/admit.js';

/** The handshake the warden reads from an initialize result that carries only `protocolVersion` (and
 *  `serverInfo` when given): what a test of the tools needs when no initialize was captured or matters. */
export function bareHandshake(era: string, serverInfo: { name?: string } = {}): Handshake {
  const info = new Map(Object.entries(serverInfo).filter((e): e is [string, string] => e[1] !== undefined));
  return admitHandshake(new Map<string, JsonValue>([['protocolVersion', era], ['serverInfo', info]]));
}
