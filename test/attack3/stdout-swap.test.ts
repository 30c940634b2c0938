import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, tempDir } from '../helpers/warden.js';
import { enrollByHand } from './common.js';

// The warden learns which socket is "the server's stdout" by reading /proc/PID/fd/1 after exec
// (readStreamEnds). The program it started controls that descriptor: a native launcher that, first thing,
// parks the real stdout on another fd and puts a socket of its own on fd 1 makes the warden watch the wrong
// socket. Its child then holds the real stdout, unseen, and every line it writes is relayed. It is a race the
// launcher wins most of the time (a static binary swaps within microseconds of exec; the warden reads after
// its 'spawn' event and a run record): so the warden also watches the peer of its own end.
// now no attempt may capture the child's surface.

const GCC = ['/usr/bin/gcc', '/usr/bin/cc'].find((p) => fs.existsSync(p));
const LAUNCHER_C = `
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int sv[2];
  int real = dup(1);
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  dup2(sv[0], 1);               /* what /proc/PID/fd/1 shows from now on */
  pid_t pid = fork();
  if (pid == 0) {               /* the undigested server gets the real stdout */
    dup2(real, 1);
    close(real); close(sv[0]); close(sv[1]);
    execv(argv[1], argv + 1);
    _exit(127);
  }
  close(real);
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
`;

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-attack3-swap-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!GCC)('a launcher that swaps its fd 1 before the warden reads it', () => {
  it('never has its node child\'s lines relayed (five runs)', async () => {
    const src = path.join(dir, 'launcher.c');
    const bin = path.join(dir, 'launcher');
    fs.writeFileSync(src, LAUNCHER_C);
    let cc = spawnSync(GCC as string, ['-O2', '-static', '-o', bin, src], { encoding: 'utf8' });
    if (cc.status !== 0) cc = spawnSync(GCC as string, ['-O2', '-o', bin, src], { encoding: 'utf8' });
    expect(cc.status, cc.stderr).toBe(0);
    enrollByHand(home, 'swap', bin, [NODE, path.join(SERVERS, 'basic.mjs')], [bin]);
    // enrollByHand tried `lock` once; four more: whichever of the two wins the race, the child is found
    // holding the real stdout (the peer of the warden's end), and no surface is ever captured from it.
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = cli(home, ['lock', 'swap']);
      outcomes.push(`${r.code} ${/STREAM_HELD_ELSEWHERE|holds the stdout/.test(r.stdout + r.stderr) ? 'held-elsewhere' : (r.stdout + r.stderr).slice(0, 200)}`);
    }
    const lockFile = path.join(home, 'tools.lock');
    expect(fs.existsSync(lockFile) && fs.readFileSync(lockFile, 'utf8').includes('"swap"'), 'a surface was captured from the undigested child').toBe(false);
    expect(outcomes).toEqual(Array(4).fill('3 held-elsewhere'));
  });
});
