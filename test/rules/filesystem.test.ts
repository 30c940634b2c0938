import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILESYSTEM, NODE, addServer, auditEvents, connectClient, tempDir } from '../helpers/warden.js';
import { toolNamed, writeRules } from '../helpers/rules.js';

// The seed's set-up on the real server-filesystem: its read tools classified read, write_file a local change,
// everything else left unclassified in strict mode, driven by the SDK client through `mcp-warden run`.

const READS = ['read_text_file', 'list_directory', 'get_file_info', 'search_files'];

let dir: string;
let home: string;
let files: string;

const baseRules = (writeFile: Record<string, unknown>) => ({
  mode: 'strict',
  tools: { ...Object.fromEntries(READS.map((t) => [t, { kind: 'read' }])), write_file: { kind: 'local-change', ...writeFile } },
});

beforeAll(() => {
  dir = tempDir();
  home = path.join(dir, 'home');
  files = path.join(dir, 'files');
  fs.mkdirSync(files);
  fs.writeFileSync(path.join(files, 'hello.txt'), 'hello from the rules test\n');
  addServer(home, 'fs', [NODE, FILESYSTEM, files]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const refusal = (r: unknown) => (r as { message?: string }).message ?? String(r);

describe('operator rules on server-filesystem (strict mode)', () => {
  it('lists only the classified tools and refuses a call to an unclassified one', async () => {
    writeRules(home, 'fs', baseRules({ allowHintMismatch: true }));
    const { client, stderr } = await connectClient(home, 'fs');
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([...READS, 'write_file'].sort());
    const err = await client.callTool({ name: 'move_file', arguments: { source: path.join(files, 'hello.txt'), destination: path.join(files, 'moved.txt') } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/refused the call to tool "move_file" of server 'fs' \(unclassified\)/);
    expect(fs.existsSync(path.join(files, 'hello.txt'))).toBe(true);
    await client.close();
    expect(stderr()).toMatch(/server 'fs' \(strict mode\): 9 tools withheld by the operator's rules \(unclassified: /);
    const events = auditEvents(home);
    expect(events.filter((e) => e.event === 'call_refused').pop()).toMatchObject({ server: 'fs', tool: 'move_file', reason: 'unclassified' });
    const applied = events.filter((e) => e.event === 'rules_applied').pop() as { withheld: { tool: string }[]; withheldCount: number };
    expect(applied.withheldCount).toBe(9);
    expect(applied.withheld.map((w) => w.tool)).toContain('move_file');
  });

  it("refuses write_file while the server's destructiveHint disputes 'local-change', and allows it with an explicit override that is audited", async () => {
    writeRules(home, 'fs', baseRules({}));
    const refused = await connectClient(home, 'fs');
    expect((await refused.client.listTools()).tools.map((t) => t.name)).not.toContain('write_file');
    const err = await refused.client.callTool({ name: 'write_file', arguments: { path: path.join(files, 'new.txt'), content: 'x' } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/\(hint_mismatch\): the operator classified it local-change and the server's destructiveHint claims more/);
    await refused.client.close();
    expect(fs.existsSync(path.join(files, 'new.txt'))).toBe(false);

    writeRules(home, 'fs', baseRules({ allowHintMismatch: true }));
    const allowed = await connectClient(home, 'fs');
    expect((await allowed.client.listTools()).tools.map((t) => t.name)).toContain('write_file');
    const ok = await allowed.client.callTool({ name: 'write_file', arguments: { path: path.join(files, 'new.txt'), content: 'written' } });
    expect(ok.isError).toBeFalsy();
    await allowed.client.close();
    expect(fs.readFileSync(path.join(files, 'new.txt'), 'utf8')).toBe('written');
    expect(allowed.stderr()).toMatch(/tool "write_file" is classified local-change although the server's destructiveHint claim more; allowed by the rule's allowHintMismatch/);
    const applied = auditEvents(home).filter((e) => e.event === 'rules_applied').pop();
    expect(applied).toMatchObject({ overrides: [{ tool: 'write_file', kind: 'local-change', hints: ['destructiveHint'] }] });
  });

  it('hides a denied parameter from the schema the client is shown and refuses a call that sends it', async () => {
    writeRules(home, 'fs', { mode: 'strict', tools: { read_text_file: { kind: 'read', deny: ['head', 'tail'] } } });
    const { client } = await connectClient(home, 'fs');
    const tool = toolNamed((await client.listTools()).tools, 'read_text_file');
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(['path']);
    const ok = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'hello.txt') } });
    expect(JSON.stringify(ok.content)).toContain('hello from the rules test');
    const err = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'hello.txt'), tail: 1 } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/\(parameter_denied\): the operator denied the parameter "tail"/);
    await client.close();
    expect(auditEvents(home).filter((e) => e.event === 'call_refused').pop()).toMatchObject({ tool: 'read_text_file', reason: 'parameter_denied' });
  });

  it('forwards a fixed parameter with its value, hides it (and its `required`) from the client, and refuses a call that sets it', async () => {
    writeRules(home, 'fs', { mode: 'strict', tools: { list_directory: { kind: 'read', fixed: { path: files } } } });
    const { client } = await connectClient(home, 'fs');
    const tool = toolNamed((await client.listTools()).tools, 'list_directory');
    expect(tool.inputSchema.properties ?? {}).toEqual({});
    expect(tool.inputSchema.required).toBeUndefined();
    const listing = await client.callTool({ name: 'list_directory', arguments: {} });
    expect(JSON.stringify(listing.content)).toContain('hello.txt');
    const err = await client.callTool({ name: 'list_directory', arguments: { path: '/' } }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/\(parameter_fixed\): the operator fixed the value of "path"; a call may not set it/);
    await client.close();
    const events = auditEvents(home);
    const fixed = events.filter((e) => e.event === 'call_fixed').pop();
    expect(fixed).toEqual({ event: 'call_fixed', server: 'fs', tool: 'list_directory', parameters: ['path'], ts: expect.any(String), prev: expect.any(String) });
    const ruleEvents = events.filter((e) => ['call_fixed', 'call_refused', 'rules_applied'].includes(String(e.event)));
    expect(ruleEvents.length).toBeGreaterThan(2);
    expect(JSON.stringify(ruleEvents)).not.toContain(files); // the fixed value is not in the log
  });

  it('refuses a tool whose schema requires a denied parameter, with the reason, instead of rewriting it in part', async () => {
    writeRules(home, 'fs', { mode: 'strict', tools: { read_text_file: { kind: 'read', deny: ['path'] }, list_directory: { kind: 'read' } } });
    const { client, stderr } = await connectClient(home, 'fs');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_directory']);
    const err = await client.callTool({ name: 'read_text_file', arguments: {} }).catch((e: unknown) => e);
    expect(refusal(err)).toMatch(/\(schema_refused\): its locked schema cannot be checked/);
    await client.close();
    expect(stderr()).toMatch(/schema_refused: read_text_file/);
    // Where in the server's schema (a pointer into it: here its top level) is the warden's report, not the client's.
    expect(stderr()).toMatch(/\(schema_refused\): its input schema requires the hidden parameter "path" at the top level/);
  });
});
