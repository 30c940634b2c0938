import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BASE_TOOLS, opened, request, shapeshifter, toolNames, type Shifter } from '../helpers/surface.js';

// docs/adr/0035: "a launch uses a remembered entry only for bytes that were validated whole, and the entry it
// uses is the one those bytes held". The remembered entry is ID's entry *re-rendered* by renderToolsLock, which
// is RFC 8785: every number becomes its double's shortest text. tools.lock's reader keeps each number's lexeme,
// and where warden.lock has no print for a tool the session recomputes the locked exact print from tools.lock's
// tool (surface/diff.ts: printTool(lt.tool)). So a tools.lock that holds 9007199254740993 (valid: SPEC §7
// hashes are over RFC 8785, where it equals ...992) is enforced exactly when read whole, and as ...992 when
// read from cache/locks.ID.json: a server that moved the bound to ...992 is refused by the first launch after
// the locks changed, and let through by every launch after it.

let sh: Shifter;
afterEach(() => sh?.cleanup());

async function searchListed(): Promise<boolean> {
  const s = sh.session();
  await opened(s);
  const names = toolNames(await request(s, 'tools/list'));
  s.close();
  await s.exited;
  return names.includes('search');
}

describe('a lock entry remembered in cache/locks.ID.json', () => {
  it('keeps the exact number tools.lock holds: a bound moved from 9007199254740993 to 9007199254740992 is hidden with and without the cache', async () => {
    sh = shapeshifter({ toolsRaw: BASE_TOOLS });
    const toolsLock = path.join(sh.home, 'tools.lock');
    const wardenLock = path.join(sh.home, 'warden.lock');
    // tools.lock as another writer (or a reviewer's hand) may hold it: the bound as the server wrote it. Its
    // hashes are RFC 8785, so the file stays valid.
    const text = fs.readFileSync(toolsLock, 'utf8');
    expect(text).toContain('9007199254740992');
    fs.writeFileSync(toolsLock, text.replace('9007199254740992', '9007199254740993'));
    // warden.lock without the tool's print (taken by another tool, or from before the print existed): the
    // session recomputes the locked print from tools.lock's tool.
    const wl = JSON.parse(fs.readFileSync(wardenLock, 'utf8')) as { servers: { shifty: { tools: Record<string, unknown> } } };
    delete wl.servers.shifty.tools.search;
    fs.writeFileSync(wardenLock, JSON.stringify(wl, null, 2) + '\n');

    sh.serve({ toolsRaw: BASE_TOOLS.replace('9007199254740993', '9007199254740992') });
    fs.rmSync(path.join(sh.home, 'cache', 'locks.shifty.json'), { force: true });
    // Read whole: the drift is seen and the tool is hidden.
    expect(await searchListed()).toBe(false);
    expect(fs.existsSync(path.join(sh.home, 'cache', 'locks.shifty.json'))).toBe(true);
    // The same bytes, read from the cache the launch above wrote: the same judgement is expected.
    expect(await searchListed()).toBe(false);
  });
});
