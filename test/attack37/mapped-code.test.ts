import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statKey } from '../../dist/attest/stat-key.js';
import { verifyMappedCode } from '../../dist/launch/mapped-files.js';
import { buildLibrary, buildNativeServer } from '../helpers/native-server.js';
import { requireHost } from '../helpers/host.js';
import { cli, INITIALIZE, RawSession, tempDir } from '../helpers/warden.js';

// After spawn the warden reads the code the server process mapped (/proc/PID/maps): every file behind an
// executable mapping must be a digested inode or a system library. A library swapped in between its digest and
// ld.so's open is another inode, and the session ends before a line of it is relayed.

let dir: string;
let server: string;
let lib: string;

beforeAll(() => {
  dir = tempDir('warden-i37-maps-');
  ({ server, lib } = buildNativeServer(path.join(dir, 'native')));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const keyOf = (file: string) => statKey(fs.statSync(file, { bigint: true }));

describe('the code a running process mapped', () => {
  it('passes with the executable and its library digested, and is LIBRARY_UNATTESTED without the library', async () => {
    const p = spawn(server, [], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      // Its first line: ld.so has mapped every library by then.
      const line = new Promise<string>((resolve) => p.stdout.once('data', (d: Buffer) => resolve(d.toString())));
      p.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
      expect(await line).toContain('"id":1');
      expect(() => verifyMappedCode(p.pid as number, [keyOf(server), keyOf(lib)], 'native')).not.toThrow();
      expect(() => verifyMappedCode(p.pid as number, [keyOf(server)], 'native')).toThrow(expect.objectContaining({ code: 'LIBRARY_UNATTESTED', message: expect.stringContaining(`"${fs.realpathSync(lib)}"`) }));
    } finally {
      p.kill('SIGKILL');
    }
  });

  it('passes for a node process, whose libraries are all the system\'s', () => {
    expect(() => verifyMappedCode(process.pid, [keyOf(process.execPath)], 'node')).not.toThrow();
  });
});

describe('a library swapped between its digest and its load', () => {
  it('never answers the client: the launch is refused or the session ended before its first line is relayed', async () => {
    requireHost('python3');
    const home = path.join(dir, 'home');
    expect(cli(home, ['add', 'native', '--yes', '--', server]).code).toBe(0);
    const impostor = path.join(dir, 'impostor.so');
    buildLibrary(impostor, 'native-impostor');
    // With no digest cache the warden opens the library twice before exec (its ELF headers, its digest): the helper
    // renames the impostor over it the moment the second read is closed.
    fs.rmSync(path.join(home, 'cache'), { recursive: true, force: true });
    const swapper = spawn('python3', [path.join(import.meta.dirname, '../helpers/swap-on-digest.py'), lib, '2', 'rename', impostor], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve) => swapper.stdout.on('data', (d: Buffer) => ((out += d.toString()), out.includes('"ready"') && resolve())));
    const swapped = new Promise<void>((resolve) => swapper.once('exit', () => resolve()));
    const s = new RawSession(home, 'native');
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    const { code } = await s.exited;
    await swapped;
    expect(JSON.parse(out.trim().split('\n').pop() as string)).toMatchObject({ swapped: true });
    expect(s.stdoutBytes.toString()).not.toContain('native-impostor');
    expect(code).toBe(3);
    const error = answer.error as { data: { code?: string; cause?: string } };
    expect(['LIBRARY_UNATTESTED', 'ARTIFACT_CHANGED']).toContain(error.data.code ?? error.data.cause);
  });
});
