import fs from 'node:fs';
import path from 'node:path';
import { INITIALIZE, RawSession, SERVERS, auditEvents, cli } from '../helpers/warden.js';

// Shared by the attack3 tests: a home with one server written by hand and every named file allowlisted, then
// locked as an operator would (`lock` launches it once; if the warden stops it there, it has no lock entry and
// every run is refused, which is the outcome these tests expect), and a run that reports what the client got
// for `initialize`.

export const SH_SERVER = path.join(SERVERS, 'interp/server.sh');
export const PY_SERVER = path.join(SERVERS, 'interp/server.py');

export function enrollByHand(home: string, id: string, command: string, args: string[], allow: string[]): void {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { [id]: { command, args } } }), { mode: 0o600 });
  for (const file of allow) {
    const r = cli(home, ['allowlist', 'add', file]);
    if (r.code !== 0) throw new Error(`allowlist add ${file}: ${r.stderr}`);
  }
  cli(home, ['lock', id]);
}

export interface Outcome {
  /** The first line the client got, parsed. */
  first: Record<string, unknown>;
  lines: number;
  code: number | null;
  stderr: string;
  launchCodes: unknown[];
}

/**
 * Runs the server through `mcp-warden run`, sends initialize and waits for the first answer, then for the warden
 * to end the session itself (a refusal does); a session still open after `lingerMs` is ended by the client
 * closing its side, as before.
 */
export async function initializeThroughWarden(home: string, id: string, lingerMs = 1500): Promise<Outcome> {
  const s = new RawSession(home, id);
  s.send(INITIALIZE + '\n');
  const first = await s.message(1);
  let linger: NodeJS.Timeout | undefined;
  await Promise.race([s.exited, new Promise((r) => (linger = setTimeout(r, lingerMs)))]);
  clearTimeout(linger);
  s.close();
  const { code } = await s.exited;
  const launchCodes = auditEvents(home).filter((e) => e.event === 'launch').map((e) => e.code ?? e.decision);
  return { first, lines: s.lines().length, code, stderr: s.stderr, launchCodes };
}
