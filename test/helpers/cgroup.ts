import fs from 'node:fs';
import path from 'node:path';

/** This process's cgroup (v2) path, relative to the hierarchy's root ("/" or "/user.slice/..."), or undefined. */
export function ownCgroup(): string | undefined {
  return fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'))?.slice(3);
}

/** Our own cgroup (v2) directory if this host lets us make one below it, as the launch does. */
export function writableCgroup(): string | undefined {
  const mount = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup2 /.test(l))?.split(' ')[4];
  const own = ownCgroup();
  if (!mount || own === undefined) return undefined;
  const probe = path.join(mount, own, `warden-test-probe-${process.pid}`);
  try {
    fs.mkdirSync(probe);
    fs.rmdirSync(probe);
    return path.join(mount, own);
  } catch {
    return undefined;
  }
}
