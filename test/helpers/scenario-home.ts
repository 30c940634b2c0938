import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { NODE, RawSession, SERVERS, addServer, tempDir } from './warden.js';

/** A home, made once for the test file, with node servers of test/servers/ that re-read a scenario file on every
 *  request (SCENARIO_FILE, '{}' when enrolled, so each is locked honest), removed after the file. */
export interface ScenarioHome {
  readonly dir: string;
  readonly home: string;
  /** The scenario file of the first server (each server has its own: scenarioOf). */
  readonly scenario: string;
  scenarioOf(id: string): string;
  /** Writes the first server's scenario (or `id`'s). */
  serve(scenario: Record<string, unknown>, id?: string): void;
}

/** Call at the top level of a test file. `servers`: id, the server's path under test/servers/, more `add` flags;
 *  with `shared`, every server reads the first one's scenario. */
export function scenarioHome(servers: { id: string; server: string; flags?: string[] }[], options: { shared?: boolean } = {}): ScenarioHome {
  const state = { dir: '', home: '' };
  const files = new Map<string, string>();
  const h: ScenarioHome = {
    get dir() {
      return state.dir;
    },
    get home() {
      return state.home;
    },
    get scenario() {
      return files.get(servers[0]?.id as string) as string;
    },
    scenarioOf: (id) => files.get(id) as string,
    serve: (scenario, id = servers[0]?.id as string) => fs.writeFileSync(h.scenarioOf(id), JSON.stringify(scenario)),
  };
  beforeAll(() => {
    state.dir = tempDir();
    state.home = path.join(state.dir, 'home');
    for (const [i, s] of servers.entries()) {
      const file = path.join(state.dir, i === 0 || options.shared ? 'scenario.json' : `scenario-${s.id}.json`);
      if (!fs.existsSync(file)) fs.writeFileSync(file, '{}');
      files.set(s.id, file);
      addServer(state.home, s.id, [NODE, path.join(SERVERS, s.server)], ['--env', `SCENARIO_FILE=${file}`, ...(s.flags ?? [])]);
    }
  });
  afterAll(() => fs.rmSync(state.dir, { recursive: true, force: true }));
  return h;
}

/** A 2025-11-25 session of `id`: initialize, then `requests` one at a time, each awaited; every answer by its
 *  numeric id, the raw stdout and the warden's exit code. */
export async function answersOf(home: string, id: string, requests: Record<string, unknown>[]): Promise<{ byId: Map<number, Record<string, unknown>>; raw: string; code: number | null }> {
  const s = new RawSession(home, id);
  const byId = new Map<number, Record<string, unknown>>();
  const read = (): void => {
    for (const l of s.lines()) {
      const m = JSON.parse(l.toString()) as Record<string, unknown>;
      if (typeof m.id === 'number') byId.set(m.id, m);
    }
  };
  try {
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n');
    await s.until(() => (read(), byId.has(1)), 'initialize answer');
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    for (const r of requests) {
      s.send(JSON.stringify({ jsonrpc: '2.0', ...r }) + '\n');
      await s.until(() => (read(), byId.has(r.id as number)), `answer ${String(r.id)}`);
    }
    s.close();
    const { code } = await s.exited;
    return { byId, raw: s.stdoutBytes.toString(), code };
  } finally {
    s.close();
    await s.exited;
  }
}
