import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, NODE, RawSession, SERVERS, WARDEN, addServer, alive, auditEvents, launchCount, sessionLaunch, tempDir } from '../helpers/warden.js';

let home: string;
let pidFile: string;

beforeAll(() => {
  home = tempDir();
  pidFile = path.join(home, 'grandchild.pid');
  // 'grandchild' and 'stubborn' are enrolled unarmed (ARMED_BY, test/servers/grandchild.mjs, ignore-sigterm.mjs:
  // ordinary servers until the file exists) and armed once enrolled: armed, each of add's three launches waited out
  // the warden's SIGTERM wait (2 s); the tests run them armed, as before.
  const arm = path.join(home, 'armed');
  addServer(home, 'grandchild', [NODE, path.join(SERVERS, 'grandchild.mjs')], ['--env', `GRANDCHILD_PID_FILE=${pidFile}`, '--env', `ARMED_BY=${arm}`]);
  addServer(home, 'stubborn', [NODE, path.join(SERVERS, 'ignore-sigterm.mjs')], ['--env', `ARMED_BY=${arm}`]);
  fs.writeFileSync(arm, '');
  addServer(home, 'basic', [NODE, path.join(SERVERS, 'basic.mjs')]);
  addServer(home, 'quits', [NODE, path.join(SERVERS, 'quits-when-told.mjs')], ['--env', `QUIT_IF_EXISTS=${path.join(home, 'quit-now')}`]);
}, 120_000); // four enrollments, each launching its server three times: past 30 s on a loaded machine
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function lastExit(server: string): Record<string, unknown> | undefined {
  return auditEvents(home).filter((e) => e.event === 'exit' && e.server === server).pop();
}

describe('the exit status of run', () => {
  it("is 3 when the server ends with status 0 before answering initialize (no surface was reached); the client is told its stderr is in the client's log, the warden's report quotes its last line escaped", async () => {
    fs.writeFileSync(path.join(home, 'quit-now'), '');
    const s = new RawSession(home, 'quits');
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    expect(answer.error).toMatchObject({ data: { cause: 'protocol_error' } });
    const message = (answer.error as { message: string }).message;
    expect(message).toMatch(/exited with code 0 before answering/);
    s.close();
    expect((await s.exited).code, s.stderr).toBe(3);
    // The client is told where the server's own words are (its log of this server), never given them.
    expect(message).toContain("Its last stderr lines are in this client's log of the server, each behind '[server quits]'");
    expect(message).not.toContain('EACCES');
    // The warden's report there quotes the last one, escaped.
    expect(s.stderr).toContain(`[server quits] Error: EACCES: permission denied, mkdir \\u001b[31m/home/q/.state\n`);
    expect(s.stderr).toContain(`mcp-warden: server 'quits' exited with code 0 before answering; the last line of its stderr: "Error: EACCES: permission denied, mkdir \\u001b[31m/home/q/.state"`);
    fs.rmSync(path.join(home, 'quit-now'));
  });

  it("answers an initialize the client sends only after the session ended (the server exited at once) with the server's exit, and is 3", async () => {
    fs.writeFileSync(path.join(home, 'quit-now'), '');
    const s = new RawSession(home, 'quits');
    // The warden's report of the exit is written when the session fails (session.fail): nothing was read from the
    // client before it, so the request sent now reaches a relay that has already ended.
    await s.until(() => s.stderr.includes("mcp-warden: server 'quits' exited with code 0 before answering"), "the warden's report of the exit");
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    expect(answer).toMatchObject({ id: 1, error: { code: -32001, data: { cause: 'protocol_error', server: 'quits' } } });
    expect((answer.error as { message: string }).message).toMatch(/exited with code 0 before answering/);
    s.close();
    expect((await s.exited).code, s.stderr).toBe(3);
    expect(s.lines()).toHaveLength(1);
    expect(lastExit('quits')).toMatchObject({ cause: 'server_exit' });
    fs.rmSync(path.join(home, 'quit-now'));
  });
});

describe('the server process group', () => {
  it('kills a grandchild the server left running when the client closes', async () => {
    fs.rmSync(pidFile, { force: true });
    const s = new RawSession(home, 'grandchild');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(alive(grandchild)).toBe(true);
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(alive(grandchild)).toBe(false);
    expect(lastExit('grandchild')).toMatchObject({ cause: 'client_eof', groupGone: true });
  });

  it('SIGKILLs a server that ignores SIGTERM and stays after stdin closes', async () => {
    const after = launchCount(home, 'stubborn');
    const s = new RawSession(home, 'stubborn');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const pid = (await sessionLaunch(home, { server: 'stubborn', after })).pid as number;
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(lastExit('stubborn')).toMatchObject({ stoppedBy: 'sigkill', groupGone: true });
    expect(s.stderr).toContain('ignoring SIGTERM');
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('stops the group and exits 0 when the warden itself gets %s', async (signal) => {
    const after = launchCount(home, 'basic');
    const s = new RawSession(home, 'basic');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const pid = (await sessionLaunch(home, { server: 'basic', after })).pid as number;
    s.proc.kill(signal);
    expect(await s.exited).toEqual({ code: 0, signal: null }); // handled: not node's default death by the signal
    expect(alive(pid)).toBe(false);
    expect(lastExit('basic')).toMatchObject({ cause: 'signal', signal, groupGone: true });
  });

  it('sweeps the group of a warden that was SIGKILLed, on the next run', async () => {
    fs.rmSync(pidFile, { force: true });
    const after = launchCount(home, 'grandchild');
    const s = new RawSession(home, 'grandchild');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const pid = (await sessionLaunch(home, { server: 'grandchild', after })).pid as number;
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    s.proc.kill('SIGKILL');
    await s.exited;
    expect(alive(pid) || alive(grandchild)).toBe(true); // detached: it outlived its supervisor
    expect(fs.existsSync(path.join(home, 'run', `${pid}.json`))).toBe(true);

    const next = new RawSession(home, 'basic');
    next.send(INITIALIZE + '\n');
    await next.message(1);
    next.close();
    await next.exited;
    expect(alive(pid)).toBe(false);
    expect(alive(grandchild)).toBe(false);
    expect(next.stderr).toContain(`killed process group ${pid} of server 'grandchild'`);
    const orphan = auditEvents(home).find((e) => e.event === 'orphan_killed' && e.pgid === pid);
    expect(orphan).toMatchObject({ server: 'grandchild', gone: true });
    expect(orphan?.pids).toEqual(expect.arrayContaining([grandchild]));
    expect(fs.existsSync(path.join(home, 'run', `${pid}.json`))).toBe(false);
  });

  it('survives a client that stops reading: no crash on EPIPE, the session ends at stdin EOF and the group is stopped', async () => {
    const s = new RawSession(home, 'basic');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    const stdout = s.proc.stdout;
    stdout.destroy(); // the client's read end is gone: the warden's next writes fail with EPIPE
    s.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
    s.send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"into the void"}}}\n');
    s.close();
    const exit = await s.exited;
    expect(exit.code).toBe(0);
    expect(s.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(lastExit('basic')).toMatchObject({ cause: 'client_eof' });
  });
});

describe('a verb whose reader goes away', () => {
  it('exits quietly when its stdout is closed early (| head)', () => {
    const r = spawnSync('sh', ['-c', `'${process.execPath}' '${WARDEN}' --home '${home}' audit show | head -c 10`], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toHaveLength(10);
    expect(r.stderr).toBe('');
  });
});
