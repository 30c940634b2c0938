import { WardenError } from '../error.js';
import { escaped } from '../escape.js';

// How a verb's outcome reaches the shell: its exit code, one sentence for a refusal, a stack for an internal
// error. Used by main.ts and by plain-run.ts, which scripts/bundle.mjs builds into a file of its own: each
// bundle holds its own copy of this file and of WardenError, so each settles only the verbs it ran itself, and
// `instanceof WardenError` below always meets the class its verb threw.

/** `run` holds stdin and signal handlers; once the session is over, exit as soon as stdout is flushed. */
export function exitWhenFlushed(code: number): Promise<number> {
  return new Promise(() => process.stdout.write('', () => process.exit(code)));
}

/** Reports the outcome of a verb: its exit code, or one sentence for a WardenError, or an internal error. */
export function settle(outcome: Promise<number>): void {
  outcome.then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (err instanceof WardenError) {
        process.stderr.write(`mcp-warden: ${err.code}: ${escaped(err.message)}\n`);
        process.exitCode = err.exitCode;
        return;
      }
      process.stderr.write(`mcp-warden: internal error (please report): ${(err instanceof Error ? (err.stack ?? err.message) : String(err)).split('\n').map(escaped).join('\n')}\n`);
      process.exitCode = 70;
    },
  );
}
