import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FILESYSTEM, NODE, WARDEN, addServer, escapeRegExp, auditEvents, cli, connectClient, tempDir, type CliResult } from '../helpers/warden.js';
import { writeRules } from '../helpers/rules.js';
import { member, readHomeJson, type ServerJson } from '../helpers/json-docs.js';

// `mcp-warden rules <id>` on the real server-filesystem: what it shows (offline, from servers.json and the
// locks), each edit flag (validated, written, pinned in warden.lock, audited), refusals that change nothing,
// `diff` on rules changed by hand, and `--propose`, the server's claim applied only on the operator's yes.

const READS = ['directory_tree', 'get_file_info', 'list_allowed_directories', 'list_directory', 'list_directory_with_sizes', 'read_file', 'read_media_file', 'read_multiple_files', 'read_text_file', 'search_files'];
const DESTRUCTIVE = ['edit_file', 'move_file', 'write_file'];

let shared: string;
let template: string;
let files: string;
let added: CliResult;
let home: string;

beforeAll(() => {
  shared = tempDir();
  template = path.join(shared, 'template');
  files = path.join(shared, 'files');
  fs.mkdirSync(files);
  fs.writeFileSync(path.join(files, 'hello.txt'), 'hello\n');
  added = addServer(template, 'fs', [NODE, FILESYSTEM, files]);
});
afterAll(() => fs.rmSync(shared, { recursive: true, force: true }));

let n = 0;
beforeEach(() => {
  home = path.join(shared, `home${++n}`);
  fs.cpSync(template, home, { recursive: true });
});

const rules = (...args: string[]): CliResult => cli(home, ['rules', 'fs', ...args]);
const ok = (r: CliResult): CliResult => {
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return r;
};
/** What `rules --json` prints (src/cli/rules-print.ts, jsonOfView). */
interface RulesJson {
  policy: Record<string, { decision: string; default: boolean }>;
  pin: { state: string; hash: string | null; pinned: string | null };
  tools: ({ name: string; kind: string | null; decision: string } & Record<string, unknown>)[];
  notInLock: { name: string; kind: string }[];
  change?: { changed: boolean; from: string | null; to: string | null };
}
/** What `rules --propose --json` prints (jsonOfProposal), with the rules applied after `--yes`. */
interface ProposalJson {
  proposal: { name: string; kind: string; source: string; decision: string }[];
  applied: boolean;
  rules?: RulesJson;
}
const json = <T = RulesJson>(r: CliResult): T => JSON.parse(ok(r).stdout) as T;
const tool = (view: RulesJson, name: string): RulesJson['tools'][number] | undefined => view.tools.find((t) => t.name === name);
const serversRules = (): ServerJson['rules'] => member(readHomeJson(home, 'servers.json').servers, 'fs').rules;
const pinned = (): string | undefined => member(readHomeJson(home, 'warden.lock').servers, 'fs').h_rules;
const snapshot = (): string[] => ['servers.json', 'warden.lock', 'tools.lock', 'audit.log'].map((f) => fs.readFileSync(path.join(home, f), 'utf8'));

describe('mcp-warden rules: showing', () => {
  it('shows a server without rules: open mode, the default policy marked as defaults, every locked tool allowed', () => {
    const r = ok(rules());
    expect(r.stdout).toMatch(/Server 'fs' has no rules: every tool its lock approves is listed and callable/);
    expect(r.stdout).toMatch(/^ {2}read +allow +\(default\)$/m);
    expect(r.stdout).toMatch(/^ {2}remote-change +ask +\(default\)$/m);
    expect(r.stdout).toMatch(/^ {2}destructive +ask +\(default\)$/m);
    expect(r.stdout).toMatch(/Ask timeout: 120 s \(default\)/);
    expect(r.stdout).toMatch(/Tools of the lock \(14\)/);
    const view = json(rules('--json'));
    expect(view).toMatchObject({ server: 'fs', hasRules: false, mode: 'open', askTimeoutSeconds: { value: 120, default: true }, pin: { state: 'none', hash: null, pinned: null }, notInLock: [] });
    expect(view.policy).toEqual({ read: { decision: 'allow', default: true }, 'local-change': { decision: 'allow', default: true }, 'remote-change': { decision: 'ask', default: true }, destructive: { decision: 'ask', default: true } });
    expect(view.tools).toHaveLength(14);
    expect(view.tools.every((t: { decision: string; kind: unknown }) => t.decision === 'allow' && t.kind === null)).toBe(true);
  });

  it("shows each tool's rule: kind, decision, the hint mismatch from the locked annotations, denied and fixed names, an override said but not printed", () => {
    ok(rules('--mode', 'strict', '--kind', 'read_text_file=read', '--deny', 'read_text_file:head', '--kind', 'list_directory=read', '--fix', `list_directory:path=${JSON.stringify(files)}`, '--kind', 'write_file=local-change', '--describe', 'write_file=Write one file.'));
    const text = ok(rules()).stdout;
    expect(text).toMatch(/^ {2}read_text_file +read +allow +denied: head$/m);
    expect(text).toMatch(new RegExp(`^ {2}list_directory +read +allow +fixed: path="${escapeRegExp(files)}"$`, 'm'));
    expect(text).toMatch(/^ {2}write_file +local-change +withheld \(hint_mismatch\) +hint mismatch: the server's destructiveHint claims destructive; accept it with --allow-hint-mismatch write_file.*; description overridden$/m);
    expect(text).toMatch(/^ {2}move_file +unclassified +withheld \(unclassified\)$/m);
    expect(text).not.toMatch(/Write a new file or completely overwrite/); // the server's description of write_file
    const view = json(rules('--json'));
    expect(tool(view, 'read_text_file')).toEqual({ name: 'read_text_file', kind: 'read', decision: 'allow', reason: null, claim: null, hintMismatch: null, descriptionOverridden: false, deny: ['head'], fixed: {} });
    expect(tool(view, 'list_directory')).toMatchObject({ kind: 'read', decision: 'allow', fixed: { path: files } });
    expect(tool(view, 'write_file')).toMatchObject({ kind: 'local-change', decision: 'withhold', reason: 'hint_mismatch', claim: { atLeast: 'destructive', hints: ['destructiveHint'] }, hintMismatch: { hints: ['destructiveHint'], accepted: false }, descriptionOverridden: true });
    expect(tool(view, 'move_file')).toMatchObject({ kind: null, decision: 'withhold', reason: 'unclassified' });
    expect(view.pin).toEqual({ state: 'pinned', hash: pinned(), pinned: pinned() });
  });

  it('says that a rule for a tool the lock does not have is probably a typo, and that hand-written rules are not pinned', () => {
    writeRules(home, 'fs', { mode: 'strict', tools: { reed_file: { kind: 'read' } } });
    const text = ok(rules()).stdout;
    expect(text).toMatch(/were never pinned in warden\.lock\. Review them below, then pin them: mcp-warden --home \S+ rules fs --pin/);
    expect(text).toMatch(/Rules for tools the lock does not have \(a typo\?[^\n]*\n {2}reed_file +read/);
    const view = json(rules('--json'));
    expect(view.notInLock).toEqual([{ name: 'reed_file', kind: 'read' }]);
    expect(view.pin).toMatchObject({ state: 'added', pinned: null });
  });
});

describe('mcp-warden rules: editing', () => {
  it('writes each change through the schema, pins the new hash in warden.lock and audits rules_changed via cli', () => {
    const first = json(rules('--json', '--mode', 'strict', '--kind', 'read_text_file=read', '--policy', 'destructive=deny', '--ask-timeout', '30'));
    expect(serversRules()).toEqual({ mode: 'strict', policy: { destructive: 'deny' }, tools: { read_text_file: { kind: 'read' } }, askTimeoutSeconds: 30 });
    expect(first.change).toEqual({ changed: true, from: null, to: pinned() });
    expect(first.policy.destructive).toEqual({ decision: 'deny', default: false });
    const second = json(rules('--json', '--kind', 'write_file=local-change', '--allow-hint-mismatch', 'write_file', '--deny', 'write_file:mode', '--fix', 'read_text_file:head=3', '--describe', 'read_text_file=Read a file.'));
    expect(serversRules()?.tools).toEqual({ read_text_file: { kind: 'read', fixed: { head: 3 }, description: 'Read a file.' }, write_file: { kind: 'local-change', allowHintMismatch: true, deny: ['mode'] } });
    expect(tool(second, 'write_file')).toMatchObject({ decision: 'allow', hintMismatch: { hints: ['destructiveHint'], accepted: true } });
    const third = json(rules('--json', '--no-allow-hint-mismatch', 'write_file', '--undeny', 'write_file:mode', '--unfix', 'read_text_file:head', '--undescribe', 'read_text_file', '--unclassify', 'read_text_file', '--policy', 'destructive=default', '--mode', 'open'));
    expect(serversRules()).toEqual({ mode: 'open', policy: {}, tools: { write_file: { kind: 'local-change' } }, askTimeoutSeconds: 30 });
    expect(third.pin.state).toBe('pinned');
    const changes = auditEvents(home).filter((e) => e.event === 'rules_changed');
    expect(changes.map(({ via, from, to }) => ({ via, from, to }))).toEqual([
      { via: 'cli', from: undefined, to: first.change?.to },
      { via: 'cli', from: first.change?.to, to: second.change?.to },
      { via: 'cli', from: second.change?.to, to: third.change?.to },
    ]);
    expect(changes.every((e) => e.server === 'fs')).toBe(true);
  });

  it('removes the rules object with --clear and the pin with it', () => {
    ok(rules('--kind', 'read_text_file=read'));
    expect(pinned()).toMatch(/^sha256:/);
    const cleared = json(rules('--json', '--clear'));
    expect(serversRules()).toBeUndefined();
    expect(pinned()).toBeUndefined();
    expect(cleared).toMatchObject({ hasRules: false, pin: { state: 'none' }, change: { changed: true, to: null } });
  });

  it.each([
    ['an unknown kind', ['--kind', 'read_text_file=harmless'], /RULES_INVALID: value "harmless" is not allowed in servers\.json at \/servers\/fs\/rules\/tools\/read_text_file\/kind: use one of "read", "local-change", "remote-change", "destructive"\. File: \S+servers\.json/],
    ['an unknown policy kind', ['--policy', 'dangerous=deny'], /RULES_INVALID: unknown key 'dangerous' in servers\.json at \/servers\/fs\/rules\/policy/],
    ['an unknown decision', ['--policy', 'read=maybe'], /RULES_INVALID: value "maybe" is not allowed in servers\.json at \/servers\/fs\/rules\/policy\/read/],
    ['an unknown mode', ['--mode', 'paranoid'], /RULES_INVALID: value "paranoid" is not allowed in servers\.json at \/servers\/fs\/rules\/mode/],
    ['a parameter both denied and fixed', ['--kind', 'list_directory=read', '--deny', 'list_directory:path', '--fix', 'list_directory:path="/tmp"'], /RULES_INVALID: .* at \/servers\/fs\/rules\/tools\/list_directory: a parameter is both denied and fixed; keep one/],
    ['a --fix value that is not JSON', ['--kind', 'list_directory=read', '--fix', 'list_directory:path=/tmp'], /USAGE: --fix "list_directory:path=\/tmp": the value "\/tmp" is not JSON .* A string is written in JSON quotes, e\.g\. --fix 'list_directory:path="\/tmp"'/],
    ['a fixed integer a double would change', ['--kind', 'list_directory=read', '--fix', 'list_directory:depth=9007199254740993'], /USAGE: --fix "list_directory:depth=9007199254740993": the number 9007199254740993 cannot be kept as written/],
    ['a fixed decimal a double would change', ['--kind', 'list_directory=read', '--fix', 'list_directory:depth=0.10000000000000000001'], /USAGE: --fix "list_directory:depth=0\.10000000000000000001": the number 0\.10000000000000000001 cannot be kept as written/],
    ['an ask timeout that is not a number of seconds', ['--ask-timeout', 'soon'], /RULES_INVALID: wrong type in servers\.json at \/servers\/fs\/rules\/askTimeoutSeconds: expected a number, found the string "soon"/],
    ['a tool the lock does not have', ['--kind', 'reed_file=read'], /TOOL_UNKNOWN: server 'fs' has no tool "reed_file" in tools\.lock; its tools: create_directory, /],
    ['a parameter change on an unclassified tool', ['--deny', 'move_file:destination'], /RULES_INVALID: tool "move_file" of server 'fs' has no rule, so --deny has nothing to change\. Classify it first, in the same command: --kind move_file=KIND/],
    ['a malformed flag', ['--kind', 'read_text_file'], /USAGE: --kind "read_text_file": expected TOOL=KIND/],
  ])('refuses %s with exit 2 and a stable code, and changes nothing', (_what, args, message) => {
    ok(rules('--kind', 'read_text_file=read'));
    const before = snapshot();
    const r = rules(...args);
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/Nothing was changed/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(snapshot()).toEqual(before);
  });

  it('refuses an edit while the rules differ from their pin, and accepts the hand edit and the change together with --pin', () => {
    ok(rules('--kind', 'read_text_file=read'));
    writeRules(home, 'fs', { tools: { read_text_file: { kind: 'read' }, move_file: { kind: 'read' } } });
    const before = snapshot();
    const r = rules('--kind', 'write_file=destructive');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/RULES_NOT_PINNED: the rules of server 'fs' in \S+ are not the ones pinned in warden\.lock \(changed since the last pin, probably by hand\)\. Review them with: mcp-warden rules fs/);
    expect(snapshot()).toEqual(before);
    ok(rules('--pin', '--kind', 'write_file=destructive'));
    expect(Object.keys(serversRules()?.tools ?? {})).toEqual(['read_text_file', 'move_file', 'write_file']);
    expect(json(rules('--json')).pin.state).toBe('pinned');
  });
});

describe('mcp-warden diff on the rules', () => {
  it('exits 1 for rules changed by hand, with both hashes in --json, and 0 once they are pinned', () => {
    ok(rules('--kind', 'read_text_file=read'));
    const was = pinned();
    writeRules(home, 'fs', { mode: 'strict', tools: { read_text_file: { kind: 'read' } } });
    const human = cli(home, ['diff', 'fs']);
    expect(human.code, human.stderr).toBe(1);
    expect(human.stdout).toMatch(/^ {2}rules {4}changed: sha256:\S+ in servers\.json, sha256:\S+ pinned in warden\.lock$/m);
    const d = cli(home, ['diff', 'fs', '--json']);
    expect(d.code).toBe(1);
    const rulesPart = JSON.parse(d.stdout).rules;
    expect(rulesPart).toMatchObject({ state: 'changed', changed: true, pinned: was });
    expect(rulesPart.hash).not.toBe(was);
    const pin = ok(rules('--pin'));
    expect(pin.stdout).toMatch(/Changed the rules of server 'fs': pinned sha256:/);
    expect(auditEvents(home).filter((e) => e.event === 'rules_changed').pop()).toMatchObject({ via: 'cli', from: was, to: rulesPart.hash });
    const after = cli(home, ['diff', 'fs', '--json']);
    expect(after.code, after.stdout).toBe(0);
    expect(JSON.parse(after.stdout).rules).toMatchObject({ state: 'pinned', changed: false });
  });

  it('verify (the CI line) exits 1 for rules changed by hand too, naming them, and 0 once they are pinned', () => {
    ok(rules('--kind', 'read_text_file=read'));
    const was = pinned();
    writeRules(home, 'fs', { mode: 'strict', tools: { read_text_file: { kind: 'read' } } });
    const human = cli(home, ['verify', 'fs']);
    expect(human.code, human.stderr).toBe(1);
    expect(human.stdout).toContain("fs: the operator's rules changed since they were pinned");
    const d = cli(home, ['verify', '--json']);
    expect(d.code).toBe(1);
    expect(JSON.parse(d.stdout).servers.find((x: { id: string }) => x.id === 'fs').rules).toMatchObject({ state: 'changed', changed: true, pinned: was });
    ok(rules('--pin'));
    expect(cli(home, ['verify', 'fs']).code).toBe(0);
  });

  it('exits 1 for rules removed by hand; pinning the served surface again keeps the pinned rules hash', () => {
    ok(rules('--kind', 'read_text_file=read'));
    const was = pinned();
    writeRules(home, 'fs', undefined);
    const d = cli(home, ['diff', 'fs', '--json']);
    expect(d.code).toBe(1);
    expect(JSON.parse(d.stdout).rules).toEqual({ state: 'removed', changed: true, hash: null, pinned: was });
    ok(cli(home, ['pin', 'fs']));
    expect(pinned()).toBe(was);
  });
});

/** Runs the warden on a pty (script(1)), answering each "[y/N] " question with the next of `answers`. */
function onTerminal(args: string[], answers: string[]): Promise<{ code: number | null; out: string; asked: number }> {
  const command = [process.execPath, WARDEN, '--home', home, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...process.env, TERM: 'dumb' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let asked = 0;
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`did not finish:\n${out}`))), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if ((out.match(/\[y\/N\] /g) ?? []).length > asked) child.stdin.write(`${answers[asked++] ?? ''}\n`);
    });
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, out, asked })));
  });
}

describe('mcp-warden rules --propose', () => {
  it("add offers strict mode non-interactively: the proposal, each line the server's claim, and the command that applies it; nothing applied", () => {
    expect(added.stdout).toMatch(/Proposed classification for server 'fs' — the SERVER'S CLAIM/);
    expect(added.stdout).toMatch(/^ {2}read_text_file +read +allow +server's claim \(readOnlyHint=true, openWorldHint=false\)$/m);
    expect(added.stdout).toMatch(/^ {2}write_file +destructive +ask +server's claim \(/m);
    expect(added.stdout).toMatch(/Not applied\. To apply it: mcp-warden --home \S+ rules fs --propose --yes/);
    expect(JSON.parse(fs.readFileSync(path.join(template, 'servers.json'), 'utf8')).servers.fs.rules).toBeUndefined();
  });

  it('prints the proposal and applies nothing without --yes', () => {
    const r = ok(rules('--propose'));
    expect(r.stdout.match(/^ {2}\S+ +\S+ +\S+ +server's claim/gm)).toHaveLength(14);
    expect(r.stdout).toMatch(/Nothing was applied\. To apply it as strict mode: mcp-warden --home \S+ rules fs --propose --yes/);
    expect(serversRules()).toBeUndefined();
    const j = json<ProposalJson>(rules('--propose', '--json'));
    expect(j.applied).toBe(false);
    expect(j.proposal).toHaveLength(14);
    expect(j.proposal.every((p: { source: string }) => p.source === "server's claim")).toBe(true);
  });

  it('with --yes makes strict rules whose session lists exactly the proposed tools the policy lets through', async () => {
    ok(rules('--policy', 'destructive=deny'));
    const r = json<ProposalJson>(rules('--propose', '--yes', '--json'));
    expect(r.applied).toBe(true);
    const proposed = Object.fromEntries(r.proposal.map((p) => [p.name, p.kind]));
    expect(Object.entries(proposed).filter(([, k]) => k === 'destructive').map(([t]) => t).sort()).toEqual(DESTRUCTIVE);
    expect(Object.entries(proposed).filter(([, k]) => k === 'read').map(([t]) => t).sort()).toEqual(READS);
    expect(serversRules()).toMatchObject({ mode: 'strict', policy: { destructive: 'deny' } });
    expect(Object.keys(serversRules()?.tools ?? {}).sort()).toEqual(Object.keys(proposed).sort());
    expect(r.rules?.pin.state).toBe('pinned');
    const { client } = await connectClient(home, 'fs');
    const listed = (await client.listTools()).tools.map((t) => t.name).sort();
    await client.close();
    expect(listed).toEqual(Object.entries(proposed).filter(([, k]) => k !== 'destructive').map(([t]) => t).sort());
    // What the proposal said strict mode would make of each tool is what the session did.
    expect(listed).toEqual(r.proposal.filter((p) => p.decision !== 'withhold').map((p) => p.name).sort());
  });

  it("keeps the operator's own classification and proposes only for the tools without one", () => {
    ok(rules('--kind', 'write_file=local-change', '--allow-hint-mismatch', 'write_file'));
    const r = json<ProposalJson>(rules('--propose', '--yes', '--json'));
    expect(r.proposal.find((p: { name: string }) => p.name === 'write_file')).toMatchObject({ kind: 'local-change', source: 'operator' });
    expect(serversRules()?.tools?.write_file).toEqual({ kind: 'local-change', allowHintMismatch: true });
  });

  it("import offers strict mode for each server it enrolled, marked as the server's claim, and applies nothing", () => {
    const config = path.join(shared, `client${n}.json`);
    fs.writeFileSync(config, JSON.stringify({ mcpServers: { files: { command: NODE, args: [FILESYSTEM, files] } } }, null, 2) + '\n');
    const r = ok(cli(home, ['import', config, '--yes']));
    expect(r.stdout).toMatch(/Proposed classification for server 'files' — the SERVER'S CLAIM/);
    expect(r.stdout.match(/^ {2}\S+ +\S+ +\S+ +server's claim/gm)).toHaveLength(14);
    expect(r.stdout).toMatch(/Not applied\. To apply it: mcp-warden --home \S+ rules files --propose --yes/);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.files.rules).toBeUndefined();
    // With --json, stdout stays one document: no offer is printed.
    const second = path.join(shared, `client${n}b.json`);
    fs.writeFileSync(second, JSON.stringify({ mcpServers: { files2: { command: NODE, args: [FILESYSTEM, files] } } }, null, 2) + '\n');
    const quiet = ok(cli(home, ['import', second, '--yes', '--json']));
    expect(JSON.parse(quiet.stdout).entries).toMatchObject([{ name: 'files2', result: 'imported' }]);
  });

  it('on a terminal asks, and applies the proposal only on y', async () => {
    const no = await onTerminal(['rules', 'fs', '--propose'], ['n']);
    expect(no.asked).toBe(1);
    expect(no.out).toMatch(/Apply it to server 'fs' as strict mode .*\[y\/N\]/);
    expect(serversRules()).toBeUndefined();
    const yes = await onTerminal(['rules', 'fs', '--propose'], ['y']);
    expect(yes.code, yes.out).toBe(0);
    expect(serversRules()).toMatchObject({ mode: 'strict', tools: { read_text_file: { kind: 'read' }, write_file: { kind: 'destructive' } } });
    expect(auditEvents(home).filter((e) => e.event === 'rules_changed')).toHaveLength(1);
  });

  it('add on a terminal asks about strict mode once the server is trusted and locked, and applies nothing without a yes', async () => {
    const r = await onTerminal(['add', 'fs2', '--', NODE, FILESYSTEM, files], ['y', '']);
    expect(r.code, r.out).toBe(0);
    expect(r.asked).toBe(2);
    expect(r.out).toMatch(/Proposed classification for server 'fs2' — the SERVER'S CLAIM[\s\S]*Apply it to server 'fs2' as strict mode\? \[y\/N\]/);
    expect(r.out).toMatch(/Not applied\. To apply it: mcp-warden --home \S+ rules fs2 --propose --yes/);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.fs2.rules).toBeUndefined();
  });
});
