import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, SERVERS, WARDEN, addServer, tempDir } from '../helpers/warden.js';

// `run` as a client starts it takes a short way past the command-line parser (src/cli/main.ts, plainRun); every
// other spelling still goes through the parser, with its usage errors.

let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir('warden-run-words-');
  home = path.join(dir, 'home');
  expect(addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')]).code).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => spawnSync(NODE, [WARDEN, ...args], { input: INITIALIZE + '\n', encoding: 'utf8', timeout: 60_000 });

/** Starts `run` with these words, sends initialize, and closes stdin once the first line is back. */
function session(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; answered: boolean }> {
  const child = spawn(NODE, [WARDEN, ...args], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('\n')) child.stdin.end();
  });
  child.stdin.write(INITIALIZE + '\n');
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, answered: (JSON.parse(out.split('\n')[0] || '{}') as { result?: unknown }).result !== undefined })),
  );
}

describe('the words run is started with', () => {
  it('serves the session whether the home is given as --home DIR, --home=DIR or by MCP_WARDEN_HOME', async () => {
    for (const [args, env] of [
      [['--home', home, 'run', 'basic'], process.env],
      [[`--home=${home}`, 'run', 'basic'], process.env],
      [['run', 'basic'], { ...process.env, MCP_WARDEN_HOME: home }],
    ] as const) {
      expect({ args, ...(await session([...args], env)) }).toEqual({ args, code: 0, answered: true });
    }
  });

  it('refuses extra words and unknown options with a usage error (exit 2), launching nothing', () => {
    for (const args of [['--home', home, 'run', 'basic', 'extra'], ['--home', home, 'run', '--bogus', 'basic'], ['--home', home, 'run']]) {
      const r = run(args);
      expect({ args, code: r.status, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^mcp-warden: error: /);
    }
  });

  it('settles a refusal of the one-file run (dist/bundle/plain-run.js) by its code and exit code, not as an internal error; that file imports none of the chunks', () => {
    const r = run(['--home', home, 'run', 'no-such-server']);
    expect({ code: r.status, internal: /internal error/.test(r.stderr) }).toEqual({ code: 2, internal: false });
    expect(r.stderr).toMatch(/^mcp-warden: SERVER_UNKNOWN: /);
    // One file with its own WardenError: a relative import would share a chunk's class with main's copy.
    const one = fs.readFileSync(path.join(path.dirname(WARDEN), '../bundle/plain-run.js'), 'utf8');
    expect(one.match(/(?:from|import)\s*\(?\s*["']\.{1,2}\/[^"']*["']/g)).toBeNull();
  });
});
