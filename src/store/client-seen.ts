import fs from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { writeJsonAtomic } from './atomic.js';
import { loadJsonFile } from './json-file.js';
import type { HomePaths } from './paths.js';

// The client identity (clientInfo name and version) last seen in band for a server. Out-of-band sessions
// (verify, diff, lock, canary check, the daemon) present it, so that a server cannot tell them from the
// client it usually serves by who says hello (docs/adr/0012). Never a secret; written owner-only like the rest.

export interface ClientIdentity {
  name: string;
  version: string;
}

/** Until a client has connected through the warden: a generic identity, not the warden's. */
export const GENERIC_CLIENT: ClientIdentity = { name: 'mcp-client', version: '1.0.0' };

const MAX = 128;
const schema = v.strictObject({ name: v.pipe(v.string(), v.maxLength(MAX)), version: v.pipe(v.string(), v.maxLength(MAX)) });

function fileOf(paths: HomePaths, id: string): string {
  return path.join(paths.cacheDir, `client.${id}.json`);
}

export function loadClientSeen(paths: HomePaths, id: string): ClientIdentity {
  return loadJsonFile(fileOf(paths, id), `the client identity last seen for server '${id}'`, schema, true) ?? GENERIC_CLIENT;
}

/** Records the identity from a client's initialize, when it is a plain one and differs from the stored one. */
export function saveClientSeen(paths: HomePaths, id: string, clientInfo: unknown): string | undefined {
  const parsed = v.safeParse(schema, clientInfo instanceof Map ? { name: clientInfo.get('name'), version: clientInfo.get('version') } : undefined);
  if (!parsed.success) return undefined; // odd clientInfo: keep what was stored
  const file = fileOf(paths, id);
  try {
    const now = JSON.stringify(parsed.output, null, 2) + '\n';
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === now) return undefined;
    fs.mkdirSync(paths.cacheDir, { recursive: true, mode: 0o700 });
    writeJsonAtomic(file, parsed.output);
    return undefined;
  } catch (err) {
    return `could not record the client identity in ${file}: ${(err as Error).message}`;
  }
}
