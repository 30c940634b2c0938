import { WardenError } from '../error.js';
import { applyProposal, proposeRules } from '../enroll/rules-propose.js';
import type { HomePaths } from '../store/paths.js';
import { confirm, escaped, line } from './output.js';
import { command, printProposal } from './rules-print.js';

// The offer `add`, `import` and `install` make once a server's lock is written: strict mode with a
// classification proposed from the server's own annotations (its claim, marked as such). On a terminal the
// operator is asked; anywhere else (scripts, tests, --yes, which confirms trusting the artifacts and nothing
// more) the proposal and the command that applies it are printed, and nothing is applied.

export async function offerStrictMode(paths: HomePaths, homeFlag: string | undefined, id: string, ask: boolean): Promise<void> {
  const apply = command(homeFlag, paths.home, `rules ${id} --propose --yes`);
  try {
    const proposal = proposeRules(paths, id);
    if (proposal.length === 0) return;
    line('');
    line(`Strict mode (optional): only the tools you classify are listed and callable, and each kind's policy applies.`);
    printProposal(id, proposal);
    if (ask && (await confirm(escaped(`Apply it to server '${id}' as strict mode? [y/N] `)))) {
      const change = await applyProposal(paths, id, proposal, false);
      line(escaped(`Applied: server '${id}' is in strict mode${change.to ? ` (rules pinned in warden.lock)` : ''}. Change a tool's kind with: ${command(homeFlag, paths.home, `rules ${id} --kind TOOL=KIND`)}`));
      return;
    }
    line(escaped(`Not applied. To apply it: ${apply}  (to review first: ${command(homeFlag, paths.home, `rules ${id} --propose`)})`));
  } catch (err) {
    // The server is enrolled either way: an offer that cannot be made is said, not a failure of the verb.
    if (!(err instanceof WardenError)) throw err;
    line(escaped(`Strict mode could not be offered for server '${id}': ${err.message}`));
  }
}
