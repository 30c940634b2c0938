import { once } from 'node:events';
import zlib from 'node:zlib';
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

/** What a tarball may unpack to before it is refused (npm's largest packages unpack to a few hundred MiB). */
export const MAX_UNPACKED = 1024 * 1024 * 1024;
/** Compressed bytes inflated at a time: a slice of a gzip inflates to at most ~1000 times its size. */
const SLICE = 16 * 1024;

/** The first <dir>/package.json of a tarball, inflated a slice at a time and no further than needed. */
function firstPackageJson(tgz: Buffer, label: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let tooBig = false;
    const gzipped = tgz[0] === 0x1f && tgz[1] === 0x8b;
    const gunzip = gzipped ? zlib.createGunzip() : undefined;
    const settle = (err: WardenError | undefined, found?: Buffer): void => {
      if (settled) return;
      settled = true;
      gunzip?.destroy();
      if (err) reject(err);
      else resolve(found as Buffer);
    };
    const unreadable = (err: Error): void => settle(new WardenError('INSTALL_FAILED', `the tarball of ${label} cannot be read (${err.message}); nothing was installed.`));
    const parser = new Parser({
      filter: (p: string) => /^[^/]+\/package\.json$/.test(p),
      onReadEntry: (entry: ReadEntry) => {
        if (settled || entry.size > MAX_MANIFEST) {
          tooBig ||= entry.size > MAX_MANIFEST;
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => settle(undefined, Buffer.concat(chunks)));
      },
    });
    parser.on('error', unreadable);
    parser.on('end', () => settle(new WardenError('INSTALL_FAILED', `the tarball of ${label} holds no ${tooBig ? 'package.json under 1 MiB' : 'package.json'}; nothing was installed.`)));
    if (!gunzip) {
      parser.end(tgz);
      return;
    }
    let unpacked = 0;
    gunzip.on('data', (c: Buffer) => {
      if (settled) return;
      unpacked += c.length;
      if (unpacked > MAX_UNPACKED) settle(new WardenError('INSTALL_FAILED', `the tarball of ${label} unpacks to more than ${MAX_UNPACKED} bytes before its package.json (${tgz.length} bytes as sent: a decompression bomb?); nothing was installed.`));
      else parser.write(c);
    });
    gunzip.on('end', () => {
      if (!settled) parser.end();
    });
    gunzip.on('error', unreadable);
    void (async () => {
      for (let at = 0; at < tgz.length && !settled; at += SLICE) {
        if (gunzip.write(tgz.subarray(at, at + SLICE))) continue;
        // Whichever comes first; the other wait is cancelled, so no listener is left behind per wait.
        const waits = new AbortController();
        await Promise.race([once(gunzip, 'drain', { signal: waits.signal }), once(gunzip, 'close', { signal: waits.signal })]).catch(() => undefined);
        waits.abort();
      }
      if (!settled) gunzip.end();
    })();
  });
}

export async function manifestOfTarball(tgz: Buffer, label: string): Promise<TarballManifest> {
  const found = await firstPackageJson(tgz, label);
  try {
    const m = JSON.parse(found.toString('utf8')) as unknown;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new Error('not an object');
    return m as TarballManifest;
  } catch (err) {
    throw new WardenError('INSTALL_FAILED', `the package.json in the tarball of ${label} is not a JSON object (${(err as Error).message}); nothing was installed.`);
  }
}

/** The bin entries of a manifest: {command name: relative script path}. */
export function binsOf(manifest: TarballManifest, name: string): Record<string, string> {
  if (typeof manifest.bin === 'string') return { [name.split('/').pop() as string]: manifest.bin };
  if (manifest.bin && typeof manifest.bin === 'object' && !Array.isArray(manifest.bin)) {
    return Object.fromEntries(Object.entries(manifest.bin as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }
  return {};
}
