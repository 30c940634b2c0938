import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { NODE, SERVERS, addServer, tempDir } from './warden.js';

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
