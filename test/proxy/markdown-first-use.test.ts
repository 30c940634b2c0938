import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerTo, opened, send } from '../attack6/common.js';
import { copyOfRunTemplate } from '../helpers/run-template.js';
import { NODE, ROOT, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// Issue 31: the bundle loads markdown-it (dist/bundle/markdown-it.cjs) at the first string the name check reads as
// Markdown, not with `run`'s code, after checking its sha256 against the one the build wrote into the code that
// loads it (scripts/bundle.mjs). A server's -32042 error whose message names the warden only as a renderer shows it
// ("mc[](x)p-warden") needs the parser to be refused.

const SERVER = path.join(SERVERS, 'markdown', 'hidden-link-error.mjs');

async function refusedCall(s: RawSession): Promise<Record<string, unknown>> {
  expect(await opened(s)).toEqual(['sync']);
  send(s, { id: 3, method: 'tools/call', params: { name: 'sync', arguments: {} } });
  return answerTo(s, 3, 'the -32042 call answered');
}

function home(): { dir: string } {
  return copyOfRunTemplate(`markdown-first-use ${NODE}`, (d) => {
    addServer(path.join(d, 'home'), 'mdlink', [NODE, SERVER]);
  });
}

describe('the Markdown parser loaded at its first use in the bundled run', () => {
  it('a -32042 error hiding the warden\'s name in a link is refused -32001 (the parser loaded and read it)', async () => {
    const { dir } = home();
    const s = new RawSession(path.join(dir, 'home'), 'mdlink');
    try {
      const answer = await refusedCall(s);
      expect((answer.error as { code: number }).code).toBe(-32001);
      expect(JSON.stringify(answer)).not.toContain('mc[](x)p-warden');
    } finally {
      s.close();
      await s.exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a parser file changed after the build is never run: the session serves until the first Markdown, then ends with the sentence of WARDEN_FILE_INVALID, exit 3, the error not relayed', async () => {
    const { dir } = home();
    // a copy of the built warden (what `run` loads) whose parser file has one more byte
    const copy = tempDir();
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(copy, 'package.json'));
    for (const sub of ['cli', 'bundle', 'launch/preload']) fs.cpSync(path.join(ROOT, 'dist', sub), path.join(copy, 'dist', sub), { recursive: true });
    const parserFile = path.join(copy, 'dist/bundle/markdown-it.cjs');
    fs.appendFileSync(parserFile, ';');
    // RawSession starts `[...wrap, node, WARDEN, ...]`: the wrap swaps WARDEN for the copy's entry
    const wrap = ['sh', '-c', 'w="$WARDEN_COPY"; shift; exec "$0" "$w" "$@"'];
    const s = new RawSession(path.join(dir, 'home'), 'mdlink', { ...process.env, WARDEN_COPY: path.join(copy, 'dist/cli/main.js') }, wrap);
    try {
      send(s, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
      expect((await answerTo(s, 1, 'initialize result')).result).toBeDefined();
      send(s, { method: 'notifications/initialized' });
      send(s, { id: 2, method: 'tools/call', params: { name: 'sync', arguments: {} } });
      const { code } = await s.exited;
      expect(s.stderr).toContain(`${parserFile}, the warden's Markdown parser, has sha256 `);
      expect(code).toBe(3);
      expect(s.lines().map((l) => l.toString()).join('\n')).not.toContain('mc[](x)p-warden');
    } finally {
      s.close();
      await s.exited;
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
