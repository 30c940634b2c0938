import fs from 'node:fs';
import path from 'node:path';

// read.deny hides a name by rebuilding the directories on its way inside the sandbox (sandbox/deny-plan.ts), up
// to the grant that shows it or to a directory only the sandbox has. When the top one rebuilt is mounted on a
// name of the host's (a grant outside the places the sandbox hides, or a directory under the root bind), the host
// renaming that name or one above it moves the whole hiding, and the server would see what is made there next.
// So `run` watches (inotify, through fs.watch) those names and the directories on their way, and ends the session
// when one is created, removed or renamed (docs/adr/0050-sandbox-engine.md, addenda "read.deny for the session"
// and "read.deny without a race"). A denied name itself, renamed over or created, needs no watch.

export interface DenyWatch {
  /** Resolves with the denied path whose name (or an ancestor's) was replaced, created or removed. */
  replaced: Promise<string>;
  close(): void;
}

/** Each directory to watch, with the entry names in it that lead to a denied path (and which path). */
function watchList(denied: readonly string[]): Map<string, Map<string, string>> {
  const dirs = new Map<string, Map<string, string>>();
  for (const p of denied) {
    for (let name = path.resolve(p); path.dirname(name) !== name; name = path.dirname(name)) {
      const dir = path.dirname(name);
      const names = dirs.get(dir) ?? new Map<string, string>();
      if (!names.has(path.basename(name))) names.set(path.basename(name), p);
      dirs.set(dir, names);
    }
  }
  return dirs;
}

/** Watches the names of `denied` from now on; `replaced` resolves at the first change of one (never when the
 *  list is empty). A directory that cannot be watched resolves it at once: the session is not held unwatched. */
export function watchDenied(denied: readonly string[]): DenyWatch {
  const watchers: fs.FSWatcher[] = [];
  let fire: (p: string) => void = () => {};
  const replaced = new Promise<string>((resolve) => (fire = resolve));
  for (const [dir, names] of watchList(denied)) {
    try {
      const w = fs.watch(dir, { persistent: false }, (type, file) => {
        // 'rename' is inotify's create, delete and move of an entry; 'change' (a write in place) keeps the
        // dentry, and the mount on it. A name the kernel did not give (overflow) counts as a change of each.
        if (type !== 'rename') return;
        const hit = file === null ? names.values().next().value : names.get(file.toString());
        if (hit !== undefined) fire(hit);
      });
      w.on('error', () => fire(names.values().next().value as string));
      watchers.push(w);
    } catch {
      fire(names.values().next().value as string);
    }
  }
  return { replaced, close: () => watchers.splice(0).forEach((w) => w.close()) };
}
