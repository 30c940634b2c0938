import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { INITIALIZE, RawSession, tempDir } from '../helpers/warden.js';
import { basicHome } from '../helpers/run-template.js';

// Attack (whoever writes the client's entry for the warden, or a shell profile): a preload in the warden's
// own NODE_OPTIONS, spelled so that src/attest/self.ts does not see it. self.ts splits NODE_OPTIONS on
// whitespace and compares words; node's own parser removes double quotes anywhere in a word, so
// '"--require" FILE' and '--re"quire" FILE' both preload FILE into the warden, which then launches anyway.

let dir: string;
let home: string;

beforeEach(() => {
  dir = tempDir('warden-a2-self-');
  home = path.join(dir, 'home');
  basicHome(home);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

for (const spelling of ['"--require" FILE', '--re"quire" FILE', '"--import=file://FILE"']) {
  it(`NODE_OPTIONS='${spelling}' preloading code into the warden makes run refuse to launch anything (WARDEN_PRELOADED)`, async () => {
    const evil = path.join(dir, spelling.includes('import') ? 'evil.mjs' : 'evil.cjs');
    const marker = path.join(dir, 'marker');
    fs.writeFileSync(evil, spelling.includes('import') ? `import fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(marker)}, 'ran in the warden');\n` : `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran in the warden');\n`);
    const s = new RawSession(home, 'basic', { ...process.env, NODE_OPTIONS: spelling.replace('FILE', evil) });
    s.send(INITIALIZE + '\n');
    const answer = await s.message(1);
    s.close();
    const { code } = await s.exited;
    expect(fs.existsSync(marker)).toBe(true); // the preload did run in the warden (the premise)
    // Secure: the warden refuses to launch anything.
    expect((answer.error as { data?: { code?: string } } | undefined)?.data?.code).toBe('WARDEN_PRELOADED');
    expect(code).toBe(3);
  });
}
