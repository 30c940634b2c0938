import { Parser, type ReadEntry } from 'tar';
import { WardenError } from '../../error.js';

// What a package tarball says about itself: its package.json, read from the tarball (npm strips the first path
// component, usually "package/"). Never from the registry's copy of the manifest, which the publisher can make
// differ from the tarball's ("manifest confusion"): what runs is what the tarball holds.

const MAX_MANIFEST = 1024 * 1024;

export interface TarballManifest {
  name?: unknown;
  version?: unknown;
  bin?: unknown;
  dependencies?: unknown;
  optionalDependencies?: unknown;
  peerDependencies?: unknown;
}

export function manifestOfTarball(tgz: Buffer, label: string): Promise<TarballManifest> {
  return new Promise((resolve, reject) => {
    let found: Buffer | undefined;
    let tooBig = false;
    const parser = new Parser({
      filter: (p: string) => /^[^/]+\/package\.json$/.test(p),
      onReadEntry: (entry: ReadEntry) => {
        if (found || entry.size > MAX_MANIFEST) {
          tooBig ||= entry.size > MAX_MANIFEST;
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => (found = Buffer.concat(chunks)));
      },
    });
    parser.on('error', (err: Error) => reject(new WardenError('INSTALL_FAILED', `the tarball of ${label} cannot be read (${err.message}); nothing was installed.`)));
    parser.on('end', () => {
      if (!found) return reject(new WardenError('INSTALL_FAILED', `the tarball of ${label} holds no ${tooBig ? 'package.json under 1 MiB' : 'package.json'}; nothing was installed.`));
      try {
        const m = JSON.parse(found.toString('utf8')) as unknown;
        if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new Error('not an object');
        resolve(m as TarballManifest);
      } catch (err) {
        reject(new WardenError('INSTALL_FAILED', `the package.json in the tarball of ${label} is not a JSON object (${(err as Error).message}); nothing was installed.`));
      }
    });
    parser.end(tgz);
  });
}

/** The bin entries of a manifest: {command name: relative script path}. */
export function binsOf(manifest: TarballManifest, name: string): Record<string, string> {
  if (typeof manifest.bin === 'string') return { [name.split('/').pop() as string]: manifest.bin };
  if (manifest.bin && typeof manifest.bin === 'object' && !Array.isArray(manifest.bin)) {
    return Object.fromEntries(Object.entries(manifest.bin as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }
  return {};
}
