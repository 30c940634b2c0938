// Types of npm-pack.mjs (a plain ESM module, so registry-server.mjs can use it without a build).

export interface PackageFile {
  rel: string;
  mode: number;
}
export interface TarEntry {
  name: string;
  /** The ustar type flag ("0" a file, "5" a directory, …). */
  type: string;
  data: Buffer;
}

export function packageFiles(dir: string): PackageFile[];
export function tarball(files: { rel: string; data: Buffer | string; mode?: number }[]): Buffer;
export function pack(dir: string, options?: { replace?: Record<string, Buffer | string> }): Buffer;
export function entries(tgz: Buffer, maxUnpacked?: number): TarEntry[];
export function packageJsonOf(tgz: Buffer): Record<string, unknown>;
