import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVERS, cli, launchAndClose } from '../helpers/warden.js';
import { homeWithTwoServers } from '../helpers/run-template.js';

// docs/adr/0035: "Every change to a file's content changes its ctime ... or replaces the inode". Not a store
// through a shared writable mapping: the kernel updates mtime and ctime when a clean page is first made
// writable, and not again while the page stays dirty (until writeback, 30 s by default). A program that has
// tools.lock mapped changes its bytes under the stat key `run` remembered, and the next launch takes the
// remembered entry without validating the bytes the file now holds; read whole, the same file is refused.

let home: string;
const toolsLock = (): string => path.join(home, 'tools.lock');
const key = (f: string): string => {
  const st = fs.statSync(f, { bigint: true });
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
};

beforeAll(() => {
  home = homeWithTwoServers();
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const launches = (id: string): Promise<void> => launchAndClose(home, id);

/** Resolves with the next line the mapper prints. */
function nextLine(out: NodeJS.ReadableStream, want: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += d.toString();
      if (buf.includes(`${want}\n`)) {
        out.off('data', onData);
        resolve();
      }
    };
    out.on('data', onData);
    out.once('end', () => reject(new Error(`mapper ended before "${want}": ${buf}`)));
  });
}

describe('a tools.lock written through a shared mapping', () => {
  it("refuses the next launch when another server's entry was corrupted, as a whole read does", async () => {
    const bytes = fs.readFileSync(toolsLock());
    const doc = JSON.parse(bytes.toString('utf8')) as { servers: Record<string, { surface_hash: string }> };
    const good = (doc.servers.two as { surface_hash: string }).surface_hash;
    const at = bytes.indexOf(Buffer.from(`"${good}"`)) + good.length; // the last hex digit of two's surface_hash
    const flipped = bytes[at] === 0x30 ? 0x31 : 0x30;

    const mapper = spawn('python3', [path.join(SERVERS, 'attack21', 'mmap-writer.py'), toolsLock(), String(at), String(flipped)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const command = async (cmd: string, answer: string): Promise<void> => {
      const seen = nextLine(mapper.stdout, answer);
      mapper.stdin.write(`${cmd}\n`);
      await seen;
    };
    try {
      // The store must land on a page still dirty since before the launch remembered the key. Anything that writes
      // the file system's dirty pages back in between (writeback, or another process's sync or unmount: the suite
      // runs observed enrollments, whose overlays are unmounted) makes the page clean, and the store then changes
      // the key: not this road. Then the byte is put back and the road tried again, a few times at most.
      let remembered = '';
      for (let attempt = 0; attempt < 5; attempt++) {
        await command('dirty', 'ready');
        await launches('one'); // validates both files whole and remembers their keys
        remembered = key(toolsLock());
        await command('go', 'done');
        if (key(toolsLock()) === remembered) break;
        await command('undo', 'undone');
      }
      expect(fs.readFileSync(toolsLock())[at]).toBe(flipped); // the file now holds a corrupt entry for 'two'
      expect(key(toolsLock())).toBe(remembered); // under the key remembered for the valid bytes

      const r = cli(home, ['run', 'one']);
      expect(r.stderr).toContain('LOCK_INVALID');
      expect(r.stderr).toContain(toolsLock());
      expect(r.code).toBe(4);
    } finally {
      mapper.stdin.end();
      await new Promise((resolve) => mapper.once('exit', resolve));
    }
  });
});
