import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// Decoys: a tripwire for reads of well-known secret paths (docs/adr/0064-seeing-file-denials.md). The sandbox hides
// the user's home, so a server reading ~/.ssh/id_rsa gets ENOENT and nobody learns that it tried. Instead the
// warden binds an empty file of its own at each path of DECOY_PATHS inside the hidden home, for one session: the
// server reads nothing, and the read moves the file's atime, which the warden polls. The files are owned by
// another uid (DECOY_UID), mode 0444, on a read-write bind (a read-only mount never updates atime): the server,
// uid 0 without a capability, can read them but not write, chmod, re-time them, or open them O_NOATIME. Only a
// root warden can give a file away, so a warden that is not root places none (its server would own them); nor
// does one whose home's file system does not record reads (noatime). What is claimed: a read of one of these
// listed paths is seen; never "every denied read". A path a grant covers is never a decoy (the real file shows).

/** Paths under the user's home where a credential usually lives, each a decoy in every confined session. */
export const DECOY_PATHS = [
  '.ssh/id_rsa',
  '.ssh/id_ed25519',
  '.ssh/id_ecdsa',
  '.aws/credentials',
  '.config/gcloud/application_default_credentials.json',
  '.config/gh/hosts.yml',
  '.docker/config.json',
  '.kube/config',
  '.netrc',
  '.git-credentials',
] as const;

/** The owner of the decoys: nobody, never the server's uid. */
const DECOY_UID = 65534;
/** How often the decoys' atimes are read while the session runs (and once when it ended). */
export const DECOY_POLL_MS = 1000;

/** A read of a decoy: the path inside the sandbox (the user's), never contents (there are none). */
export interface DecoyRead {
  kind: 'read';
  path: string;
  reason: 'decoy';
}

export interface Decoys {
  /** How many paths were given a decoy. */
  count: number;
  /** bwrap's arguments that bind them (read-write: the file's mode keeps the server out). */
  args: string[];
  /** Starts polling; `denied` gets each read seen. */
  watch(denied: (d: DecoyRead) => void): DecoyWatch;
  /** Removes the files (a launch that did not start). */
  discard(): void;
}

export interface DecoyWatch {
  /** One last look (the session has ended), then the files are removed. */
  close(): void;
}

/** Why decoys cannot be placed for a warden whose home is `wardenHome`, or undefined when they can. `create`: make
 *  `<wardenHome>/decoys` for the probe (a launch); else (`doctor`) probe in the nearest of it and its parents that
 *  exists (a probe file made and removed). */
export function decoysUnavailable(wardenHome: string, create = true): string | undefined {
  if (process.getuid?.() !== 0) return 'the warden is not root: a decoy would be owned by the server, which could re-time or write it (an inotify watch would need a helper node lacks)';
  const decoys = path.join(wardenHome, 'decoys');
  let dir = decoys;
  try {
    if (create) fs.mkdirSync(decoys, { mode: 0o700, recursive: true });
    // doctor changes no home: the probe goes where the decoys will be, or the nearest directory that exists
    else while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    const probe = path.join(dir, `.decoy-probe-${process.pid}`);
    fs.writeFileSync(probe, 'x', { mode: 0o600 });
    try {
      fs.utimesSync(probe, 0, fs.statSync(probe).mtime);
      fs.readFileSync(probe);
      if (fs.statSync(probe).atimeMs === 0) return `the file system of ${dir} does not record reads (mounted noatime)`;
    } finally {
      fs.rmSync(probe, { force: true });
    }
  } catch (err) {
    return `${dir} cannot be used (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  return undefined;
}

const overlaps = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** The listed secret paths under `userHome` that no grant, data directory or own file of the server (`kept`)
 *  covers: a warden that places no decoys asks a node server's module guard to report its reads of these instead
 *  (launch/guard-denials.ts, docs/adr/0068). */
export function secretPaths(userHome: string, kept: readonly string[]): string[] {
  if (!path.isAbsolute(userHome) || path.resolve(userHome) === '/') return [];
  let realHome = userHome;
  try {
    realHome = fs.realpathSync(userHome);
  } catch {
    // no home: compared by its name alone
  }
  return DECOY_PATHS.filter((p) => !kept.some((k) => overlaps(path.join(userHome, p), k) || overlaps(path.join(realHome, p), k))).map((p) => path.join(path.resolve(userHome), p));
}

/** Removes the decoys of sessions whose warden is gone (a warden that was killed leaves its directory). */
function sweep(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const pid = Number(name.split('-')[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || fs.existsSync(`/proc/${pid}`)) continue;
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/**
 * The decoys of one session under the user's home `userHome` (hidden under an empty tmpfs by the sandbox, where
 * bwrap makes their mount points), their files in `<wardenHome>/decoys/<pid>-<random>`, leaving out each path that
 * overlaps `kept` (the grants, the data directory, the server's own files: what the server sees for real).
 * Undefined where none can be placed (decoysUnavailable: `mcp-warden doctor` says why; the launch records
 * `decoys: 0`).
 */
export function placeDecoys(wardenHome: string, userHome: string, kept: readonly string[]): Decoys | undefined {
  if (!path.isAbsolute(userHome) || path.resolve(userHome) === '/') return undefined;
  if (decoysUnavailable(wardenHome) !== undefined) return undefined;
  const root = path.join(wardenHome, 'decoys');
  const dir = path.join(root, `${process.pid}-${crypto.randomBytes(6).toString('hex')}`);
  let files: { host: string; inside: string }[];
  try {
    if (!fs.statSync(userHome).isDirectory()) return undefined;
    sweep(root);
    fs.mkdirSync(dir, { mode: 0o700 });
    const realHome = fs.realpathSync(userHome); // grants are real paths: a home named through a link is compared by both
    files = DECOY_PATHS.filter((p) => !kept.some((k) => overlaps(path.join(userHome, p), k) || overlaps(path.join(realHome, p), k)))
      .map((p, i) => {
        const host = path.join(dir, String(i));
        fs.writeFileSync(host, '', { mode: 0o444, flag: 'wx' });
        fs.chownSync(host, DECOY_UID, DECOY_UID);
        fs.chmodSync(host, 0o444);
        fs.utimesSync(host, 0, fs.statSync(host).mtime);
        return { host, inside: path.join(userHome, p) };
      });
  } catch {
    // Whatever failed (a home that cannot be read, a full disk), the session runs as without decoys: its
    // sandbox is the same, and the launch records `decoys: 0`.
    fs.rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const discard = (): void => fs.rmSync(dir, { recursive: true, force: true });
  return {
    count: files.length,
    args: files.flatMap((f) => ['--bind', f.host, f.inside]),
    discard,
    watch(denied) {
      const look = (): void => {
        for (const f of files) {
          let st: fs.Stats;
          try {
            st = fs.statSync(f.host);
          } catch {
            continue; // removed under the warden: nothing to report from it
          }
          if (st.atimeMs === 0) continue;
          fs.utimesSync(f.host, 0, st.mtime); // armed again: the next read is seen too (up to the session's cap)
          denied({ kind: 'read', path: f.inside, reason: 'decoy' });
        }
      };
      const timer = setInterval(look, DECOY_POLL_MS).unref();
      return {
        close() {
          clearInterval(timer);
          look();
          discard();
        },
      };
    },
  };
}
