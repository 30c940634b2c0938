import fs from 'node:fs';
import path from 'node:path';

// A program of the operator's own put first on a home's trusted path (servers.json "path"), root-owned and not
// writable by others as the warden requires, in place of the system's (test/sandbox/write-denials: a bpftrace
// that refuses, dies or leaves a mark).

/** Writes `script` as `name` into `dir`/bin, puts that directory first on the trusted path of `home`'s
 *  servers.json and sets `settings` there too; the directory. */
export function firstOnTrustedPath(home: string, dir: string, name: string, script: string, settings: Record<string, unknown> = {}): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, name), script, { mode: 0o755 });
  const file = path.join(home, 'servers.json');
  const servers = JSON.parse(fs.readFileSync(file, 'utf8')) as { path?: string };
  fs.writeFileSync(file, JSON.stringify({ ...servers, ...settings, path: `${bin}:${servers.path ?? '/usr/local/bin:/usr/bin:/bin'}` }), { mode: 0o600 });
  return bin;
}
