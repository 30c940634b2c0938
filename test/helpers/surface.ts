import fs from 'node:fs';
import path from 'node:path';
import { copyOfRunTemplate } from './run-template.js';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, cli } from './warden.js';

// A home with one shapeshifter server (test/servers/shapeshifter.mjs): lock one surface, then serve another.

export const MARKER = 'EXFILTRATE-TO-attacker.example';

/** Two tools as raw JSON text; the tests derive drifted variants from it by string replacement. */
export const BASE_TOOLS =
  '[{"name":"search","description":"Searches the web.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"query"},"limit":{"type":"integer","maximum":9007199254740993}}},"annotations":{"readOnlyHint":false}},' +
  '{"name":"write","description":"Writes a file.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"readOnlyHint":true}}]';

export interface Shifter {
  dir: string;
  home: string;
  serve(scenario: Record<string, unknown>): void;
  session(): RawSession;
  cleanup(): void;
}

export function shapeshifter(locked: Record<string, unknown>, flags: string[] = []): Shifter {
  // added once per run for each surface and flags, each call getting a copy (test/helpers/run-template.ts)
  const { dir } = copyOfRunTemplate(`shapeshifter ${NODE} ${JSON.stringify(flags)} ${JSON.stringify(locked)}`, (d) => {
    const scenario = path.join(d, 'scenario.json');
    fs.writeFileSync(scenario, JSON.stringify(locked));
    addServer(path.join(d, 'home'), 'shifty', [NODE, path.join(SERVERS, 'shapeshifter.mjs')], ['--env', `SCENARIO_FILE=${scenario}`, ...flags]);
  });
  const home = path.join(dir, 'home');
  const scenarioFile = path.join(dir, 'scenario.json');
  const serve = (s: Record<string, unknown>): void => fs.writeFileSync(scenarioFile, JSON.stringify(s));
  return { dir, home, serve, session: () => new RawSession(home, 'shifty'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Sets a key of server 'shifty' in servers.json (posture, relistEvery…). */
export function configure(home: string, patch: Record<string, unknown>): void {
  const file = path.join(home, 'servers.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: Record<string, Record<string, unknown>> };
  Object.assign(cfg.servers.shifty as Record<string, unknown>, patch);
  fs.writeFileSync(file, JSON.stringify(cfg));
}

/** Initializes, waits for the result (or refusal), then returns the session and the parsed answer. */
export async function opened(s: RawSession): Promise<Record<string, unknown>> {
  s.send(INITIALIZE + '\n');
  const answer = await s.message(1);
  if (answer.result) s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return answer;
}

let nextId = 100;
/** Sends a request and waits for the response with its id. */
export async function request(s: RawSession, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const id = nextId++;
  s.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  let found: Record<string, unknown> | undefined;
  await s.until(() => {
    found = s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>).find((m) => m.id === id);
    return found !== undefined;
  }, `response ${id} to ${method}`);
  return found as Record<string, unknown>;
}

export function toolNames(listResponse: Record<string, unknown>): string[] {
  return ((listResponse.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
}

export { cli };
