import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import type {} from './run-scratch.global.js'; // inject('runScratch')'s type

// The run's scratch directory (made and removed by test/helpers/run-scratch.global.ts, vitest's globalSetup), and
// the one way to put something there: made under a unique name, then published under its own name atomically.

/** The run's scratch directory, `sub` below it (made if missing). */
export function runScratch(sub = ''): string {
  const dir = inject('runScratch');
  if (!dir) throw new Error('no run scratch directory: run the tests with vitest.config.ts, whose globalSetup makes it');
  const out = path.join(dir, sub);
  fs.mkdirSync(out, { recursive: true });
  return out;
}

/** A fresh directory in the run's scratch directory to make something in, then publish it. */
export function makingDir(prefix: string): string {
  return fs.mkdtempSync(path.join(runScratch('made'), `${prefix}-`));
}

/** Publishes `made` (a file or directory of makingDir()) as `name` in the run's scratch directory, unless
 *  something was published there first; returns what is published there. */
export function publish(made: string, name: string): string {
  const at = path.join(runScratch('published'), name);
  try {
    fs.symlinkSync(made, at);
    return made;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return fs.readlinkSync(at);
  }
}

/** What was published as `name`, if anything was. */
export function published(name: string): string | undefined {
  try {
    return fs.readlinkSync(path.join(runScratch('published'), name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return undefined;
  }
}

/** A short name of `text` that is safe in a file name. */
export function nameOf(text: string): string {
  return crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
}
