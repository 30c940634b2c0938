import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/warden.js';
import { SH_SERVER, enrollByHand, initializeThroughWarden } from './common.js';

// The holder check runs when a complete line arrives (and then at most once a second). A helper that holds the
// server's stdout only while it writes, and has exited by the time the line is judged, is never seen. So a
// shell server whose answers are printed by a program it runs with stdout inherited is not refused, although
// docs/threat-model.md says "A server whose output is written by helper programs it runs with stdout
// inherited (a shell server printing through `jq`) is refused", and claim (2) says such a holder stops the
// session before the server's first line is relayed.

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-attack3-transient-');
  home = path.join(dir, 'home');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const ANSWER = /^  printf '\{"jsonrpc":"2\.0","id":%s,"result":%s\}\\n' "\$id" "\$result"$/m;

/** The sh fixture server with its answer line printed another way. */
function serverPrintingWith(replacement: string): string {
  const src = fs.readFileSync(SH_SERVER, 'utf8');
  expect(src).toMatch(ANSWER);
  const file = path.join(dir, 'server.sh');
  fs.writeFileSync(file, src.replace(ANSWER, replacement));
  return file;
}

describe('a shell server whose answers are written by a program it runs (stdout inherited)', () => {
  it('`/usr/bin/printf` writing each answer: stopped before the first answer is relayed', async () => {
    const script = serverPrintingWith(`  /usr/bin/printf '{"jsonrpc":"2.0","id":%s,"result":%s}\\n' "$id" "$result"`);
    enrollByHand(home, 'printf', 'sh', [script], [fs.realpathSync('/bin/sh'), script]);
    const out = await initializeThroughWarden(home, 'printf');
    expect(out.first.result, 'an answer written by the undigested /usr/bin/printf was relayed').toBeUndefined();
    expect(out.code).toBe(3);
  });

  it('a helper that writes all of the answer but its newline, and exits: stopped before that line is relayed', async () => {
    // Deterministic: the line is complete only when the shell's builtin echo adds the newline, after the
    // helper (bash, here: any program other than the digested dash) has exited.
    const script = serverPrintingWith(`  /bin/bash -c 'printf "%s" "$0"' "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":$id,\\"result\\":$result}"; echo`);
    enrollByHand(home, 'partial', 'sh', [script], [fs.realpathSync('/bin/sh'), script]);
    const out = await initializeThroughWarden(home, 'partial');
    expect(out.first.result, 'an answer written by the undigested bash was relayed').toBeUndefined();
    expect(out.code).toBe(3);
  });
});
