import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addServer, auditEvents, cli, connectClient, launchCount, refusedInitialize, SERVERS, sessionLaunch, tempDir } from '../helpers/warden.js';

// A script named on an interpreter's command line (`python3 server.py`, `sh server.sh`) is digested like the
// script of `node server.js`: allowlisted at add, checked at every run. Command lines that run code no file
// holds (`-c`, `-m`, `-e`, stdin) are refused. Before this, only the interpreter was digested and the script
// could be rewritten after `add` and run undigested (review of 2026-11-30).

const PYTHON = '/usr/bin/python3';
const FIXTURES = path.join(SERVERS, 'interp');
let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-interp-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Copies a fixture server from test/servers/interp into the test's directory. */
function copyFixture(name: string): string {
  const dest = path.join(dir, 'srv', name);
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.copyFileSync(path.join(FIXTURES, name), dest);
  return dest;
}

function allowlisted(kind: string): string[] {
  return (JSON.parse(fs.readFileSync(path.join(home, 'allowlist.json'), 'utf8')) as { entries: { kind: string; path: string }[] }).entries.filter((e) => e.kind === kind).map((e) => e.path);
}

function serverIds(): string[] {
  const file = path.join(home, 'servers.json');
  return fs.existsSync(file) ? Object.keys((JSON.parse(fs.readFileSync(file, 'utf8')) as { servers: object }).servers) : [];
}

async function toolNames(id: string): Promise<string[]> {
  const { client } = await connectClient(home, id);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  await client.close();
  return tools;
}

describe('a script named on an interpreter\'s command line', () => {
  it('python3 SCRIPT: the script is allowlisted at add, and refused at run once it changed', async () => {
    const script = copyFixture('server.py');
    addServer(home, 'py', ['python3', script]);
    expect(allowlisted('script')).toEqual([script]);
    expect(allowlisted('executable')).toEqual([fs.realpathSync(PYTHON)]);
    expect(await toolNames('py')).toEqual(['echo']);

    fs.appendFileSync(script, '\nimport os\nos.system("echo unattested code ran")\n');
    const r = await refusedInitialize(home, 'py');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toMatch(new RegExp(`script ${script} changed: expected sha256 [0-9a-f]{64}, got [0-9a-f]{64}`));
  });

  it('sh SCRIPT: a shell script that changed after add is refused at run', async () => {
    const script = copyFixture('server.sh');
    addServer(home, 'shell', ['sh', '-e', script]);
    expect(allowlisted('script')).toEqual([script]);
    expect(await toolNames('shell')).toEqual(['echo']);

    fs.appendFileSync(script, '\necho unattested >&2\n');
    const r = await refusedInitialize(home, 'shell');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('DIGEST_MISMATCH');
    expect(r.session.stderr).toContain(`script ${script} changed`);
  });

  it('runs the script at the realpath it digested, after the permitted options, whichever way it was named', async () => {
    const script = copyFixture('server.py');
    const link = path.join(dir, 'bin', 'server.py');
    fs.mkdirSync(path.dirname(link));
    fs.symlinkSync(script, link);
    addServer(home, 'named', ['python3', '-u', '-B', 'bin/server.py', '--verbose'], ['--cwd', dir]);
    const after = launchCount(home, 'named');
    expect(await toolNames('named')).toEqual(['echo']);
    const launch = await sessionLaunch(home, { server: 'named', after, decision: 'allow' });
    expect(launch?.argv).toEqual(['python3', '-u', '-B', script, '--verbose']);

    // Re-pointing the name after add changes nothing the warden runs unseen: the new target is not allowlisted.
    const other = path.join(dir, 'other.py');
    fs.writeFileSync(other, 'print("unattested")\n');
    fs.rmSync(link);
    fs.symlinkSync(other, link);
    const r = await refusedInitialize(home, 'named');
    expect(r.error.data.code).toBe('NOT_ALLOWLISTED');
    expect(r.session.stderr).toContain(`script ${other}`);
  });
});

describe('an interpreter command line that runs code no file holds', () => {
  it.each([
    ['bash -c', ['bash', '-c', 'exec python3 /tmp/x.py'], "'-c'", /give the script file itself: mcp-warden add cmd -- \S*bash \/path\/to\/script/],
    ['python3 -c', ['python3', '-c', 'print(1)'], "'-c'", /mcp-warden add cmd -- \S*python3\S* \/path\/to\/script/],
    ['python3 -m', ['python3', '-m', 'http.server'], "'-m'", /the module's own file|entry-point script/],
    ['python3 -uc (a clustered -c)', ['python3', '-uc', 'print(1)'], "'-c'", /mcp-warden add cmd/],
    ['python3 -i (reads the MCP stream as code after the script)', ['python3', '-i', '/dev/null'], "'-i'", /reads code from stdin, which is the MCP stream/],
    ['python3 -W (a warning category imports a module by name)', ['python3', '-W', 'error::foo.Bar', '/dev/null'], "'-W'", /not one the warden permits/],
    ['python3 with no script (it would read its program from the MCP stream)', ['python3', '-u'], 'no script', /reads its program from stdin/],
    ['perl -e', ['perl', '-e', 'print 1'], "'-e'", /mcp-warden add cmd/],
    ['perl -M (loads a module by name)', ['perl', '-MPOSIX', '/dev/null'], "'-M'", /loads a module looked up by name.*`use Module;`/],
    ['sh -s (commands from stdin)', ['sh', '-s'], "'-s'", /mcp-warden add cmd/],
    ['bash --rcfile', ['bash', '--rcfile', '/tmp/rc', '/dev/null'], "'--rcfile'", /not one the warden permits/],
  ])('%s is refused at add, and nothing is written', (_what, commandLine, named, hint) => {
    const r = cli(home, ['add', 'cmd', '--yes', '--', ...commandLine]);
    expect(r.code, r.stderr + r.stdout).toBe(3);
    expect(r.stderr).toContain('INTERPRETER_OPTION_REFUSED');
    expect(r.stderr).toContain("server 'cmd'");
    expect(r.stderr).toContain(named);
    expect(r.stderr).toMatch(hint);
    expect(serverIds()).toEqual([]);
    expect(fs.existsSync(path.join(home, 'allowlist.json')) ? allowlisted('executable') : []).toEqual([]);
  });

  it('node with no script is refused too', () => {
    const r = cli(home, ['add', 'cmd', '--yes', '--', process.execPath, '--no-warnings']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('NODE_OPTION_REFUSED');
    expect(r.stderr).toMatch(/reads its program from stdin/);
  });

  it('python3 -m written into servers.json by hand is refused at run, before anything is launched', async () => {
    fs.mkdirSync(home, { mode: 0o700 });
    fs.writeFileSync(path.join(home, 'servers.json'), JSON.stringify({ version: 1, servers: { pym: { command: 'python3', args: ['-m', 'mcp_server_time'] } } }), { mode: 0o600 });
    const r = await refusedInitialize(home, 'pym');
    expect(r.code).toBe(3);
    expect(r.error.data.code).toBe('INTERPRETER_OPTION_REFUSED');
    const launch = auditEvents(home).find((e) => e.event === 'launch');
    expect(launch).toMatchObject({ decision: 'refuse', code: 'INTERPRETER_OPTION_REFUSED' });
    expect(launch?.pid).toBeUndefined();
  });

  it('import refuses a client entry that runs python3 -m, and enrolls the others', () => {
    const script = copyFixture('server.py');
    const file = path.join(dir, 'claude_desktop_config.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { time: { command: 'python3', args: ['-m', 'mcp_server_time'] }, py: { command: 'python3', args: [script] } } }));
    const r = cli(home, ['import', file, '--yes', '--json']);
    const report = JSON.parse(r.stdout) as { entries: { name: string; result: string; detail?: string }[] };
    const time = report.entries.find((e) => e.name === 'time');
    expect(time?.result).toBe('refused');
    expect(time?.detail).toContain('INTERPRETER_OPTION_REFUSED');
    expect(report.entries.find((e) => e.name === 'py')?.result).toBe('imported');
    expect(allowlisted('script')).toEqual([script]);
    expect(serverIds()).toEqual(['py']);
  });
});
