import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opened, shapeshifter, type Shifter } from '../helpers/surface.js';

// cache/locks.ID.json holds ID's entry of tools.lock as a JSON string, so every quote in it is written as \\\"
// (four bytes for the lock's two), and the cache is read by loadJsonFile, which refuses any file over 16 MiB
// (FILE_INVALID). tools.lock itself may be 256 MiB. A server whose locked surface renders to more than about
// 8 MiB of quote-heavy text (nine tools under the per-tool and surface caps whose descriptions are quotes, here) launches once from the whole
// file, that launch writes a cache over the limit, and every later launch of it is refused naming a cache file
// the warden wrote itself, until someone deletes it (and the next launch writes it again). Read whole, as every
// other command reads the locks, the same files are valid.

let sh: Shifter;
// Nine tools of just under the 1 MiB per-tool cap (canonical), 9 MiB of the 16 MiB surface cap.
const QUOTES = '"'.repeat(520_000);
const toolsRaw = JSON.stringify(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((name) => ({ name, description: QUOTES, inputSchema: { type: 'object' } })));

beforeAll(() => {
  sh = shapeshifter({ toolsRaw, pageSize: 1 });
}, 120_000);
afterAll(() => sh?.cleanup());

describe('a server with a large locked surface', () => {
  it('launches as often as its locks are valid, not only once', async () => {
    const cacheFile = path.join(sh.home, 'cache', 'locks.shifty.json');
    expect(fs.statSync(path.join(sh.home, 'tools.lock')).size).toBeLessThan(16 * 1024 * 1024);
    for (let launch = 1; launch <= 2; launch++) {
      const s = sh.session();
      const answer = await opened(s);
      s.close();
      await s.exited;
      expect(answer.error, `launch ${launch}: ${s.stderr}`).toBeUndefined();
      expect(answer.result).toBeDefined();
      // A surface this large is not cached (ADR 0035: over 4 MB of text): every launch reads the locks whole.
      expect(fs.existsSync(cacheFile)).toBe(false);
    }
  }, 120_000);
});
