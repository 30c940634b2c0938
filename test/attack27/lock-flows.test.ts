import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';
import { HOSTILE, MODERN, RawSession, answerTo, sdk2Home, toolsOf, type Sdk2Home } from './helpers.js';

// Issue 27 item 2: locks over both fetch flows as surfacelock's SPEC.md §3.4 specifies them. A stateless entry
// records protocol.flow and protocol.era and re-renders byte for byte by an independent tools.lock v1
// implementation; a version-confirmed server/discover is the commit point (no fallback after it); before it,
// the fallback to the classic flow runs on a fresh launch; a recorded flow is re-used, and only that flow.

let cleanup: (() => void | Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

// An independent tools.lock v1 writer (SPEC.md §4): RFC 8785 for this data (object members sorted by UTF-16 code
// units; strings and integers as ES6 JSON.stringify writes them), re-indented like Go's json.Indent with two
// spaces, then one LF. It shares no code with src/.
function jcs(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
function indent(canonical: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < canonical.length; i++) {
    const c = canonical[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += canonical[++i];
      else if (c === '"') inString = false;
      continue;
    }
    const next = canonical[i + 1];
    if (c === '"') (inString = true), (out += c);
    else if (c === '{' || c === '[') {
      out += c;
      if (next !== '}' && next !== ']') out += '\n' + '  '.repeat(++depth);
      else out += next, i++;
    } else if (c === '}' || c === ']') out += '\n' + '  '.repeat(--depth) + c;
    else if (c === ',') out += ',\n' + '  '.repeat(depth);
    else if (c === ':') out += ': ';
    else out += c;
  }
  return out;
}
const sha = (s: string): string => `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;

describe('a stateless lock entry', () => {
  it('records flow "stateless" and era 2026-07-28, re-renders byte for byte by an independent tools.lock v1 writer, and its hashes recompute', () => {
    const h = sdk2Home('modern-only', { entry: 'reject' }, { add: 'any' });
    cleanup = h.cleanup;
    const file = path.join(h.home, 'tools.lock');
    expect(fs.existsSync(file), h.added.stderr + h.added.stdout).toBe(true);
    const text = fs.readFileSync(file, 'utf8');
    const lock = JSON.parse(text);
    expect(indent(jcs(lock)) + '\n').toBe(text);
    const entry = lock.servers['modern-only'];
    expect(entry.protocol).toEqual({ offered: MODERN, era: MODERN, flow: 'stateless' });
    expect(entry.h_instructions).toBe(sha(jcs(entry.instructions)));
    for (const t of entry.tools) expect(t.h_tool, t.name).toBe(sha(jcs(t.tool)));
    const rollup = { era: entry.protocol.era, h_instructions: entry.h_instructions, tools: entry.tools.map((t: { name: string; h_tool: string }) => ({ h_tool: t.h_tool, name: t.name })) };
    expect(entry.surface_hash).toBe(sha(jcs(rollup)));
  });
});

describe('the commit point and the fallback', () => {
  it('after a version-confirmed server/discover, an inadmissible stateless page refuses the lock: no fallback to the classic flow', () => {
    const dir = tempDir();
    cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
    const home = path.join(dir, 'home');
    const scenario = path.join(dir, 'scenario.json');
    const log = path.join(dir, 'received.jsonl');
    fs.writeFileSync(scenario, JSON.stringify({ modernDuplicate: true })); // the classic face is clean
    const r = cli(home, ['add', 'hybrid', '--yes', '--env', `SCENARIO_FILE=${scenario}`, '--env', `LOG_FILE=${log}`, '--', NODE, HOSTILE]);
    const out = r.stderr + r.stdout;
    const seen = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { method?: string }).method);
    expect(seen, out).toContain('server/discover');
    expect(seen, out).not.toContain('initialize');
    const lockFile = path.join(home, 'tools.lock');
    const entries = fs.existsSync(lockFile) ? Object.keys(JSON.parse(fs.readFileSync(lockFile, 'utf8')).servers) : [];
    expect(entries).toEqual([]);
    expect(out).toMatch(/duplicate/i);
  });

  it('a discover that lists the revision but carries a member of a 2025 initialize result is no confirmation: the classic flow locks the server on a fresh launch, and nothing is listed over the stateless flow', () => {
    const dir = tempDir();
    cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
    const home = path.join(dir, 'home');
    const scenario = path.join(dir, 'scenario.json');
    const log = path.join(dir, 'received.jsonl');
    fs.writeFileSync(scenario, JSON.stringify({ discover: { serverInfo: { name: 'modern-hostile', version: '1.0.0' } } }));
    const r = cli(home, ['add', 'hybrid', '--yes', '--env', `SCENARIO_FILE=${scenario}`, '--env', `LOG_FILE=${log}`, '--', NODE, HOSTILE]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const entry = JSON.parse(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).servers.hybrid;
    expect(entry.protocol).toEqual({ offered: '2025-11-25', era: '2025-11-25', flow: 'classic' });
    const seen = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { method?: string; params?: { _meta?: Record<string, unknown> } });
    expect(seen[0]?.method).toBe('server/discover');
    expect(seen[1]?.method).toBe('initialize'); // the fallback's first request, on a fresh launch
    expect(seen.filter((m) => m.method !== undefined && m.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== undefined).map((m) => m.method)).toEqual(['server/discover']);
  });

  it('a 2025-only server that exits on any request before initialize enrolls: the probe ran on a throwaway launch, the classic flow on a fresh one', () => {
    const dir = tempDir();
    cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
    const home = path.join(dir, 'home');
    const log = path.join(dir, 'received.jsonl');
    const r = cli(home, ['add', 'strict', '--yes', '--env', `LOG_FILE=${log}`, '--', NODE, path.join(SERVERS, 'attack27/strict-classic.mjs')]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const entry = JSON.parse(fs.readFileSync(path.join(home, 'tools.lock'), 'utf8')).servers.strict;
    expect(entry.protocol).toMatchObject({ era: '2025-11-25', flow: 'classic' });
    const byLaunch = new Map<number, string[]>();
    for (const l of fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
      const { pid, method } = JSON.parse(l) as { pid: number; method: string };
      byLaunch.set(pid, [...(byLaunch.get(pid) ?? []), method]);
    }
    const launches = [...byLaunch.values()];
    expect(launches).toContainEqual(['server/discover']); // the probe, alone on its launch
    expect(launches.find((ms) => ms.includes('initialize'))?.[0]).toBe('initialize'); // the fallback, fresh
  });
});

describe('a 2025-only server that exits on any request before initialize', () => {
  it('runs after its enrollment: a 2025 client lists its tool through the warden, and its launch gets initialize first', async () => {
    const dir = tempDir();
    cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
    const home = path.join(dir, 'home');
    const log = path.join(dir, 'received.jsonl');
    const added = cli(home, ['add', 'strict', '--yes', '--env', `LOG_FILE=${log}`, '--', NODE, path.join(SERVERS, 'attack27/strict-classic.mjs')]);
    expect(added.code, added.stderr + added.stdout).toBe(0);
    fs.rmSync(log);
    const s = new RawSession(home, 'strict');
    try {
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n');
      expect((await answerTo(s, 1)).result).toMatchObject({ protocolVersion: '2025-11-25', instructions: 'Use echo.' });
      s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      s.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
      expect(toolsOf(await answerTo(s, 2)).map((t) => t.name)).toEqual(['echo']);
    } finally {
      s.close();
      await s.exited;
    }
    const methods = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { method: string }).method);
    expect(methods[0]).toBe('initialize');
    expect(methods).not.toContain('server/discover');
  });
});

describe('a recorded flow is re-used, and only that flow', () => {
  let h: Sdk2Home | undefined;
  afterEach(() => h?.cleanup());

  it('a classic entry of a server that now serves both eras is verified over the classic flow: no server/discover', () => {
    h = sdk2Home('classic', { entry: 'legacy-only' });
    h.scenario({ entry: 'serve' });
    h.clearLog();
    const r = cli(h.home, ['verify', 'classic']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const seen = h.received().map((m) => m.method);
    expect(seen).toContain('initialize');
    expect(seen).not.toContain('server/discover');
  });
});
