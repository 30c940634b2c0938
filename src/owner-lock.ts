import fs from 'node:fs';

// proper-lockfile makes its lock (FILE.lock) with mkdir and no mode, so the directory gets the caller's umask:
// 0777 under `umask 000`, which the warden's own check of its state files then refuses (a lock another user
// could replace is not a lock). Locks are made owner-only from the start instead, whatever the umask: mkdir
// with mode 0700 can only lose bits to a umask, never gain them. Shared by the trust-file updates (store/) and
// the audit log (audit/), which is why it sits beside error.ts rather than in either.

type MkdirCallback = (err: NodeJS.ErrnoException | null) => void;

/** The `fs` proper-lockfile is given: node's own, with mkdir making owner-only directories. */
export const ownerOnlyLockFs = {
  ...fs,
  mkdir: (dir: string, cb: MkdirCallback) => fs.mkdir(dir, { mode: 0o700 }, (err) => cb(err)),
} as unknown as typeof fs;
