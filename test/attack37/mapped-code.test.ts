import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestFile } from '../../dist/attest/digest.js';
import { readElf } from '../../dist/attest/elf.js';
import { libraryArtifacts } from '../../dist/attest/native.js';
import { verifyMappedCode } from '../../dist/launch/mapped-files.js';
import { buildLibrary, buildNativeServer } from '../helpers/native-server.js';
import { requireHost } from '../helpers/host.js';
import { cli, INITIALIZE, RawSession, tempDir } from '../helpers/warden.js';

// After spawn the warden reads the objects the server process mapped (/proc/PID/maps): at the path of each object
// it resolved, the mapped file must be the inode it judged, and once the server wrote its first line every name
// it needed must be mapped from an inode resolved for it. A library swapped in between its digest and ld.so's
// open, or planted earlier in the search path after resolution, ends the session before a line is relayed.

let dir: string;
let server: string;
let lib: string;

beforeAll(() => {
  dir = tempDir('warden-i37-maps-');
  ({ server, lib } = buildNativeServer(path.join(dir, 'native')));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What the warden resolves for `file` now: every object ld.so would load at start. */
async function startupOf(file: string) {
  const d = digestFile(file);
  const { info } = readElf(file, 64);
  return (await libraryArtifacts({ kind: 'executable', path: file, sha256: d.sha256, chain: [file], key: d.key }, info as NonNullable<typeof info>, undefined)).startup;
}

/** Starts `file` and resolves once it answered a ping (ld.so has mapped everything by then); `stop` kills it. */
async function started(file: string): Promise<{ pid: number; stop: () => void }> {
  const p = spawn(file, [], { stdio: ['pipe', 'pipe', 'ignore'] });
  const line = new Promise<string>((resolve) => p.stdout.once('data', (d: Buffer) => resolve(d.toString())));
  p.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  expect(await line).toContain('"id":1');
  return { pid: p.pid as number, stop: () => p.kill('SIGKILL') };
}

describe('the objects a running process mapped', () => {
  it('pass when they are the ones resolved, the system libraries and the interpreter included', async () => {
    const startup = await startupOf(server);
    expect(startup.map((o) => o.as)).toEqual(['interpreter', 'libwl.so', 'libc.so.6']);
    const p = await started(server);
    try {
      expect(() => verifyMappedCode(p.pid, startup, 'native', true)).not.toThrow();
    } finally {
      p.stop();
    }
  });

  it('are LIBRARY_UNATTESTED when the file mapped at a resolved path is not the inode judged there', async () => {
    const p = await started(server);
    const original = `${lib}.original`;
    fs.copyFileSync(lib, original);
    try {
      // The process mapped one library; the warden judged another at the same path (the swap, seen the other way).
      buildLibrary(lib, 'native-v2');
      const startup = await startupOf(server);
      expect(() => verifyMappedCode(p.pid, startup, 'native', false)).toThrow(expect.objectContaining({ code: 'LIBRARY_UNATTESTED', message: expect.stringContaining(`mapped ${fs.realpathSync(lib)} as inode`) }));
    } finally {
      p.stop();
      fs.renameSync(original, lib);
    }
  });

  it('are LIBRARY_UNATTESTED once complete when a library planted in a glibc-hwcaps directory after resolution was loaded instead', async () => {
    const startup = await startupOf(server);
    const planted = path.join(path.dirname(lib), 'glibc-hwcaps/x86-64-v2/libwl.so');
    fs.mkdirSync(path.dirname(planted), { recursive: true });
    buildLibrary(planted, 'native-planted');
    const p = await started(server);
    try {
      expect(() => verifyMappedCode(p.pid, startup, 'native', false)).not.toThrow();
      expect(() => verifyMappedCode(p.pid, startup, 'native', true)).toThrow(expect.objectContaining({ code: 'LIBRARY_UNATTESTED', message: expect.stringContaining('runs without "libwl.so" mapped') }));
    } finally {
      p.stop();
      fs.rmSync(path.join(path.dirname(lib), 'glibc-hwcaps'), { recursive: true });
    }
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
    // Refused at the launch (data.code), or the session closed at its first line (data.cause): either way the
    // client got an error, and the warden's stderr names the check that caught it.
    expect(answer.result).toBeUndefined();
    expect(answer.error).toBeDefined();
    expect(s.stderr).toMatch(/\b(LIBRARY_UNATTESTED|ARTIFACT_CHANGED)\b/);
  });
});
