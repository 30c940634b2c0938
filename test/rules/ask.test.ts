import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ElicitRequestSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, NODE, ROOT, WARDEN, auditEvents, connectClient, tempDir } from '../helpers/warden.js';
import { addedHome } from '../helpers/run-template.js';
import { writeRules } from '../helpers/rules.js';

// `ask` on the real server-everything: a call of a tool whose kind the policy sets to ask is held while the
// warden asks the user through the client (an MCP elicitation request), answered by the SDK client's handler.

let dir: string;
let home: string;

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  addedHome(home, 'everything', [NODE, EVERYTHING, 'stdio']);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ELICITATION = { elicitation: {} };
const refusal = (r: unknown) => (r as { message?: string }).message ?? String(r);
const lastOf = (event: string) => auditEvents(home).filter((e) => e.event === event).pop();

/** echo and get-sum classified remote-change, which the default policy asks about. */
function askRules(extra: Record<string, unknown> = {}): void {
  writeRules(home, 'everything', { tools: { echo: { kind: 'remote-change' }, 'get-sum': { kind: 'read' } }, ...extra });
}

describe('ask: the user decides a held call through the client', () => {
  it('forwards the call when the user accepts, after a question that names the server, tool, arguments and their values', async () => {
    askRules();
    const asked: ElicitRequest['params'][] = [];
    const { client } = await connectClient(home, 'everything', undefined, ELICITATION, (c) =>
      c.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(req.params);
        return { action: 'accept', content: {} };
      }),
    );
    const r = await client.callTool({ name: 'echo', arguments: { message: 'approved by a person' } });
    expect(r.content).toEqual([{ type: 'text', text: 'Echo: approved by a person' }]);
    // A value that would reorder what the person reads (a right-to-left override) is shown escaped.
    await client.callTool({ name: 'echo', arguments: { message: 'rm -rf \u202e/ fles' } });
    expect(asked[1]?.message).toContain('"message": "rm -rf \\u202e/ fles"');
    expect(asked).toHaveLength(2);
    expect(asked[0]?.message).toMatch(/server 'everything' is asked to run tool "echo" \(classified remote-change by the operator\)/);
    expect(asked[0]?.message).toContain('"message": "approved by a person"');
    // A read tool is not asked about.
    expect((await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } })).isError).toBeFalsy();
    expect(asked).toHaveLength(2);
    await client.close();
    expect(lastOf('call_asked')).toMatchObject({ server: 'everything', tool: 'echo', kind: 'remote-change', arguments: ['message'], answer: 'accept' });
    expect(JSON.stringify(lastOf('call_asked'))).not.toContain('approved by a person');
  });

  it('refuses the call when the user declines', async () => {
    askRules();
    const { client } = await connectClient(home, 'everything', undefined, ELICITATION, (c) => c.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' })));
    const err = await client.callTool({ name: 'echo', arguments: { message: 'no' } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/refused the call to tool "echo" of server 'everything' \(ask_declined\): the user answered decline/);
    await client.close();
    expect(lastOf('call_asked')).toMatchObject({ tool: 'echo', answer: 'decline' });
    expect(lastOf('call_refused')).toMatchObject({ tool: 'echo', reason: 'ask_declined' });
  });

  it('refuses the call when no answer comes within the bound, and withdraws the question', async () => {
    askRules({ askTimeoutSeconds: 1 });
    let cancelled: Promise<unknown> | undefined;
    const { client } = await connectClient(home, 'everything', undefined, ELICITATION, (c) =>
      c.setRequestHandler(ElicitRequestSchema, (_req, extra) => {
        cancelled = new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve(extra.signal.reason)));
        return new Promise(() => {}); // the user never answers
      }),
    );
    const err = await client.callTool({ name: 'echo', arguments: { message: 'anyone?' } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/\(ask_declined\): no answer within 1 s/);
    expect(String(await cancelled)).toMatch(/no answer in time/);
    await client.close();
    expect(lastOf('call_asked')).toMatchObject({ tool: 'echo', answer: 'timeout' });
  });

  it('refuses the call, saying why, for a client that did not declare elicitation', async () => {
    askRules();
    const { client } = await connectClient(home, 'everything');
    const err = await client.callTool({ name: 'echo', arguments: { message: 'x' } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/\(ask_unavailable\): the policy for remote-change tools is ask and the client did not declare the elicitation capability/);
    await client.close();
    expect(lastOf('call_refused')).toMatchObject({ tool: 'echo', reason: 'ask_unavailable' });
  });

  it("still relays the server's own elicitation requests to the client and their answers back", async () => {
    askRules({ tools: { 'trigger-elicitation-request': { kind: 'local-change' } } });
    const asked: string[] = [];
    const { client } = await connectClient(home, 'everything', undefined, ELICITATION, (c) =>
      c.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(req.params.message);
        return { action: 'decline' };
      }),
    );
    const r = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    expect(asked).toHaveLength(1);
    expect(asked[0]).not.toMatch(/^mcp-warden/);
    expect(JSON.stringify(r.content)).toMatch(/decline/i);
    await client.close();
  });
});

describe('rules through the MCP inspector CLI', () => {
  it('lists only the classified tools of a strict server, with the operator description', async () => {
    writeRules(home, 'everything', { mode: 'strict', tools: { echo: { kind: 'read', description: 'Repeat a message (operator wording).' }, 'get-sum': { kind: 'read' } } });
    const inspector = path.join(ROOT, 'node_modules/.bin/mcp-inspector');
    const { stdout } = await promisify(execFile)(inspector, ['--cli', process.execPath, WARDEN, '--home', home, 'run', 'everything', '--method', 'tools/list'], {
      timeout: 60_000,
      env: { ...process.env, DANGEROUSLY_OMIT_AUTH: 'true' },
    });
    const tools = (JSON.parse(stdout) as { tools: { name: string; description?: string }[] }).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'get-sum']);
    expect(tools.find((t) => t.name === 'echo')?.description).toBe('Repeat a message (operator wording).');
  }, 60_000);
});
