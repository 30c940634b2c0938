import fs from 'node:fs';
import path from 'node:path';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, RawSession, SERVERS, addServer } from '../helpers/warden.js';
import { writeRules } from '../helpers/rules.js';

// A home with one server (test/servers/attack6/recorder.mjs) that logs every line it receives, so a test knows
// exactly what reached the server; the client is a raw line-level session.

export const RECORDER = path.join(SERVERS, 'attack6', 'recorder.mjs');

const tool = (name: string, properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object', properties },
  ...extra,
});

/** note: read, `kind` denied and `path` fixed; send: remote-change (ask by default); secret: unclassified (strict). */
export const TOOLS = [
  tool('note', { text: { type: 'string' }, kind: { type: 'string' }, path: { type: 'string' } }),
  tool('send', { to: { type: 'string' }, text: { type: 'string' } }),
  tool('secret', { cmd: { type: 'string' } }),
];

export const RULES = {
  mode: 'strict',
  tools: {
    note: { kind: 'read', deny: ['kind'], fixed: { path: '/safe' } },
    send: { kind: 'remote-change' },
  },
};

export interface Home {
  dir: string;
  home: string;
  log: string;
  received(): string;
  session(): RawSession;
  cleanup(): void;
}

export function recorderHome(options: { drift?: unknown[]; rules?: unknown } = {}): Home {
  // added once per run for each drift, each call getting a copy (test/helpers/run-template.ts)
  const { dir } = copyOfRunTemplate(`recorderHome ${NODE} ${JSON.stringify(options.drift ?? null)}`, (d) => {
    const toolsFile = path.join(d, 'tools.json');
    fs.writeFileSync(toolsFile, JSON.stringify(TOOLS));
    const env = ['--env', `TOOLS_FILE=${toolsFile}`, '--env', `LOG_FILE=${path.join(d, 'received.jsonl')}`];
    if (options.drift) {
      const driftFile = path.join(d, 'drift.json');
      fs.writeFileSync(driftFile, JSON.stringify(options.drift));
      env.push('--env', `DRIFT_FILE=${driftFile}`);
    }
    addServer(path.join(d, 'home'), 'rec', [NODE, RECORDER], env);
  });
  const home = path.join(dir, 'home');
  const log = path.join(dir, 'received.jsonl');
  writeRules(home, 'rec', options.rules ?? RULES);
  return {
    dir,
    home,
    log,
    received: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''),
    session: () => new RawSession(home, 'rec'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export const send = (s: RawSession, msg: Record<string, unknown>): void => s.send(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
export const parsed = (s: RawSession): Record<string, unknown>[] => s.lines().map((l) => JSON.parse(l.toString()) as Record<string, unknown>);

/** Waits for the client's message with this id (a response). */
export async function answerTo(s: RawSession, id: unknown, what = `response ${String(id)}`): Promise<Record<string, unknown>> {
  await s.until(() => parsed(s).some((m) => m.id === id && m.method === undefined), what);
  return parsed(s).find((m) => m.id === id && m.method === undefined) as Record<string, unknown>;
}

/** Initializes (with elicitation declared unless told otherwise), lists the tools, returns the names shown. */
export async function opened(s: RawSession, capabilities: Record<string, unknown> = { elicitation: {} }): Promise<string[]> {
  send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } } });
  const init = await answerTo(s, 1, 'initialize result');
  if (!init.result) throw new Error(`initialize refused: ${JSON.stringify(init)}\n${s.stderr}`);
  send(s, { method: 'notifications/initialized' });
  send(s, { id: 2, method: 'tools/list' });
  const list = await answerTo(s, 2, 'tools/list');
  return ((list.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
}

/** A request written as raw text (case-variant members, escapes), then a ping behind it; returns the answer to
 *  the request, if any, once the ping is answered (the server has then seen whatever was forwarded). */
export async function rawThenPing(s: RawSession, line: string, id: number): Promise<Record<string, unknown> | undefined> {
  s.send(line + '\n');
  const ping = id + 1000;
  send(s, { id: ping, method: 'ping' });
  await answerTo(s, ping, 'ping behind the raw line');
  // The server answers in order and the warden relays in order: an answer to the raw request is here by now.
  return parsed(s).find((m) => m.id === id && m.method === undefined);
}
