import type Lockfile from 'proper-lockfile';

// proper-lockfile, imported at the first lock taken rather than with the modules that lock: its dependencies
// (graceful-fs, which patches fs when loaded, signal-exit and node's assert) cost `run` CPU before its server is
// spawned, and `run` takes no lock until a refusal or its launch is audited (docs/adr/0056-launch-on-node-24.md,
// addendum "the spawn before the rest"). signal-exit's handlers are installed from then on, as before from the
// import: they only release locks a process holds.

let loaded: Promise<typeof Lockfile> | undefined;

/** The proper-lockfile module, imported once. */
export function properLockfile(): Promise<typeof Lockfile> {
  return (loaded ??= import('proper-lockfile').then((m) => m.default));
}
