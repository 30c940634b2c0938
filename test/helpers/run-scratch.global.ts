import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

// vitest globalSetup (vitest.config.ts): one scratch directory for the whole run, made before the first test file
// and removed after the last. Test files get its path with inject('runScratch') (test/helpers/run-scratch.ts) and
// keep there what many files would otherwise each build the same way, once per run: the module guard's tests put
// their enrolled template homes and their compiled marker library there (test/helpers/enrolled-template.ts,
// test/helpers/marker-library.ts). What is kept there is never changed after it is made (tests copy it), and it
// is made under a unique name then published with one atomic call, so files running in parallel may race to
// make the same thing: the loser's copy is as good. Nothing else is done here.

declare module 'vitest' {
  export interface ProvidedContext {
    runScratch: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-run-'));
  project.provide('runScratch', dir);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
