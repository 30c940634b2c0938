import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, addServer, auditEvents, tempDir } from '../helpers/warden.js';

let home: string;
const SECRET = 'sk-test-7f3a9c1e5b';

beforeAll(() => {
  home = tempDir();
  addServer(home, 'leaky', [NODE, path.join(SERVERS, 'leak-secret.mjs')]);
  addServer(home, 'given', [NODE, path.join(SERVERS, 'leak-secret.mjs')], ['--env', 'SECRET_TOKEN']);
  addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')], ['--env', 'MODE=test']);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

async function callTool(id: string, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; stderr: string }> {
  const s = new RawSession(home, id, { ...process.env, SECRET_TOKEN: SECRET, PATH: `/opt/evil/bin:${process.env.PATH}` });
  s.send(INITIALIZE + '\n');
  await s.message(1);
  s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }) + '\n');
  const r = (await s.message(2)).result as { content: { text: string }[] };
  s.close();
  await s.exited;
  return { text: r.content[0]?.text ?? '', stderr: s.stderr };
}

describe('the server environment', () => {
  it('never hands a secret in the warden environment to a server that was not given it', async () => {
    const r = await callTool('leaky', 'leak');
    expect(r.text).toBe('SECRET_TOKEN=(absent)');
    expect(r.stderr).not.toContain(SECRET);
  });

  it('passes a variable through only when servers.json names it in passEnv', async () => {
    const r = await callTool('given', 'leak');
    expect(r.text).toBe(`SECRET_TOKEN=${SECRET}`);
  });

  it('gives the server exactly PATH (trusted), HOME, TMPDIR, the session marker and what servers.json sets', async () => {
    const r = await callTool('basic', 'env', { name: 'PATH' });
    const seen = JSON.parse(r.text) as { PATH: string; names: string[] };
    expect(seen.PATH).toBe('/usr/local/bin:/usr/bin:/bin');
    expect(seen.names).toEqual(['HOME', 'MCP_WARDEN_SESSION', 'MODE', 'PATH', 'TMPDIR']);
  });

  it('records environment names, never values, in the audit log', () => {
    const log = fs.readFileSync(path.join(home, 'audit.log'), 'utf8');
    expect(log).not.toContain(SECRET);
    const launch = auditEvents(home).filter((e) => e.event === 'launch' && e.server === 'given').pop();
    expect(launch?.envNames).toEqual(['HOME', 'MCP_WARDEN_SESSION', 'PATH', 'SECRET_TOKEN', 'TMPDIR']);
  });
});
