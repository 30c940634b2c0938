import fs from 'node:fs';
import path from 'node:path';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, RawSession, SERVERS, addServer } from '../helpers/warden.js';

// One home with test/servers/attack22/reads-hostile.mjs enrolled as 'reads' (locked honest), for the reads-*
// tests: each test says what the server serves next (and the posture), so no test depends on another's order.

export const MARKER = 'EXFILTRATE-TO-attacker.example';

export interface ReadsHome {
  dir: string;
  home: string;
  /** Sets what the server serves from now on, the posture, and empties the log of lines it received. */
  serve(scenario: Record<string, unknown>, posture?: 'enforce' | 'monitor'): void;
  /** The messages the server received since the last serve(). */
  received(): Record<string, unknown>[];
  session(): RawSession;
  cleanup(): void;
}

export function readsHome(): ReadsHome {
  // added once per run, each call getting a copy (test/helpers/run-template.ts)
  const { dir } = copyOfRunTemplate(`readsHome ${NODE}`, (d) => {
    fs.writeFileSync(path.join(d, 'scenario.json'), '{}');
    addServer(path.join(d, 'home'), 'reads', [NODE, path.join(SERVERS, 'attack22/reads-hostile.mjs')], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`, '--env', `LOG_FILE=${path.join(d, 'received.log')}`]);
  });
  const home = path.join(dir, 'home');
  const scenarioFile = path.join(dir, 'scenario.json');
  const logFile = path.join(dir, 'received.log');
  return {
    dir,
    home,
    serve(scenario, posture = 'enforce') {
      fs.writeFileSync(scenarioFile, JSON.stringify(scenario));
      fs.rmSync(logFile, { force: true });
      const file = path.join(home, 'servers.json');
      const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, Record<string, unknown>> };
      (cfg.servers.reads as Record<string, unknown>).posture = posture;
      fs.writeFileSync(file, JSON.stringify(cfg));
    },
    received: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []),
    session: () => new RawSession(home, 'reads'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** The answer with this id among the lines the client received, once it arrived. */
export async function answerTo(s: RawSession, id: string | number): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await s.until(() => {
    found = s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).find((m) => m.id === id);
    return found !== undefined;
  }, `the answer to request ${String(id)}`);
  return found as Record<string, unknown>;
}

export const line = (id: string | number, method: string, params: Record<string, unknown> = {}): string => JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
export const initialize = (id: string | number): string => line(id, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
