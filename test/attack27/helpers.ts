import fs from 'node:fs';
import path from 'node:path';
// The SDK v2 client is imported where connectV2 makes one, not here: most files that import these helpers never do.
import type { Client } from '@modelcontextprotocol/client';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, RawSession, SERVERS, WARDEN, addServer, cli, type CliResult } from '../helpers/warden.js';

// Issue 27: revision 2026-07-28 through the warden. The real SDK v2 client (@modelcontextprotocol/client 2.4.0)
// in its three negotiation modes, and raw modern lines shaped exactly as that client sends them (captured
// through a tee relay: docs/adr/0044-modern-era.md).

export const MARKER = 'EXFILTRATE-TO-attacker.example';
export const MODERN = '2026-07-28';
export const SDK2_SERVER = path.join(SERVERS, 'sdk2/serve-stdio.mjs');
export const HOSTILE = path.join(SERVERS, 'attack27/modern-hostile.mjs');

export type Mode = 'auto' | 'pin' | 'legacy';

/** The SDK v2 client connected to `mcp-warden run ID` in a negotiation mode; it declares form elicitation and
 *  answers every question with `answer` (accept, confirm: true by default). */
export async function connectV2(home: string, id: string, mode: Mode, answer: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean | string[]> } = { action: 'accept', content: { confirm: true } }): Promise<{ client: Client; stderr: () => string; questions: unknown[] }> {
  const [{ Client }, { StdioClientTransport }] = await Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]);
  const versionNegotiation = mode === 'auto' ? { mode: 'auto' as const } : mode === 'pin' ? { mode: { pin: MODERN } } : undefined;
  const client = new Client({ name: 'sdk2-test-client', version: '2.0.0' }, { capabilities: { elicitation: { form: {} } }, ...(versionNegotiation ? { versionNegotiation } : {}) });
  const questions: unknown[] = [];
  client.setRequestHandler('elicitation/create', async (req: { params: unknown }) => {
    questions.push(req.params);
    return answer;
  });
  const transport = new StdioClientTransport({ command: NODE, args: [WARDEN, '--home', home, 'run', id], env: process.env as Record<string, string>, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await client.connect(transport);
  return { client, stderr: () => stderr, questions };
}

/** A home with one server enrolled from a scenario: `entry` of test/servers/sdk2/serve-stdio.mjs at `add`
 *  ("serve", "reject", "legacy-only"), changed later by `scenario()`; LOG_FILE records every line it read. */
export interface Sdk2Home {
  home: string;
  scenario(s: Record<string, unknown>): void;
  /** The JSON-RPC messages the server processes read, in order. */
  received(): Record<string, unknown>[];
  clearLog(): void;
  cleanup(): Promise<void>;
}

export function sdk2Home(id: string, atAdd: Record<string, unknown>, options: { add?: 'expect-ok' | 'any' } = {}): Sdk2Home & { added: CliResult } {
  // enrolled once per run for each id, scenario and option, each test getting a copy (test/helpers/run-template.ts)
  const { dir, made: added } = copyOfRunTemplate(`sdk2Home ${NODE} ${id} ${JSON.stringify(atAdd)} ${options.add ?? 'expect-ok'}`, (d) => {
    const scenarioFile = path.join(d, 'scenario.json');
    fs.writeFileSync(scenarioFile, JSON.stringify(atAdd));
    const flags = ['--env', `SCENARIO_FILE=${scenarioFile}`, '--env', `LOG_FILE=${path.join(d, 'received.jsonl')}`];
    return options.add === 'any' ? cli(path.join(d, 'home'), ['add', id, '--yes', ...flags, '--', NODE, SDK2_SERVER]) : addServer(path.join(d, 'home'), id, [NODE, SDK2_SERVER], flags);
  });
  const home = path.join(dir, 'home');
  const scenarioFile = path.join(dir, 'scenario.json');
  const logFile = path.join(dir, 'received.jsonl');
  return {
    home,
    added,
    scenario: (s) => fs.writeFileSync(scenarioFile, JSON.stringify(s)),
    received: () => readJsonLines(logFile),
    clearLog: () => fs.rmSync(logFile, { force: true }),
    cleanup: () => removeWhenIdle(dir, home),
  };
}

/** A home with test/servers/attack27/modern-hostile.mjs enrolled as `id` (locked honest). */
export function hostileHome(id: string): Sdk2Home {
  // enrolled once per run for each id, each test getting a copy (test/helpers/run-template.ts)
  const { dir } = copyOfRunTemplate(`hostileHome ${NODE} ${id}`, (d) => {
    fs.writeFileSync(path.join(d, 'scenario.json'), '{}');
    addServer(path.join(d, 'home'), id, [NODE, HOSTILE], ['--env', `SCENARIO_FILE=${path.join(d, 'scenario.json')}`, '--env', `LOG_FILE=${path.join(d, 'received.jsonl')}`]);
  });
  const home = path.join(dir, 'home');
  const scenarioFile = path.join(dir, 'scenario.json');
  const logFile = path.join(dir, 'received.jsonl');
  return {
    home,
    scenario: (s) => fs.writeFileSync(scenarioFile, JSON.stringify(s)),
    received: () => readJsonLines(logFile),
    clearLog: () => fs.rmSync(logFile, { force: true }),
    cleanup: () => removeWhenIdle(dir, home),
  };
}

/** The pids of processes whose command line names `home` (a `mcp-warden --home HOME run …`). */
function processesOf(home: string): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(home)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** An auto client's probe launch is a sibling `mcp-warden run` the SDK ends with SIGTERM without waiting for it:
 *  it may still be writing its audit into the home when the test ends. Waits until no process of the home is
 *  left (polled every 25 ms, up to 20 s), then removes the directory. */
async function removeWhenIdle(dir: string, home: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (let left = processesOf(home); left.length > 0 && Date.now() < deadline; left = processesOf(home)) {
    await new Promise((r) => setTimeout(r, 25));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

function readJsonLines(file: string): Record<string, unknown>[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The per-request `_meta` envelope the SDK v2 client attaches to every request of a modern session. */
export function envelope(clientName = 'raw-modern', capabilities: Record<string, unknown> = { elicitation: { form: {} } }): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: clientName, version: '2.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

/** One modern request line: params with the envelope as `_meta`. */
export function modernLine(id: string | number, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = envelope()): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }) + '\n';
}

export const parsed = (s: RawSession): Record<string, unknown>[] => s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>);

/** The answer with this id among the lines the client received, once it arrived. */
export async function answerTo(s: RawSession, id: string | number): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await s.until(() => {
    found = parsed(s).find((m) => m.id === id && m.method === undefined);
    return found !== undefined;
  }, `the answer to request ${String(id)}`);
  return found as Record<string, unknown>;
}

/** The tools of a tools/list answer (throws, naming the answer, when it is not a result). */
export function toolsOf(answer: Record<string, unknown>): { name: string; description?: string }[] {
  const result = answer.result as { tools?: { name: string; description?: string }[] } | undefined;
  if (!result?.tools) throw new Error(`not a tools/list result: ${JSON.stringify(answer)}`);
  return result.tools;
}

export { NODE, RawSession };
