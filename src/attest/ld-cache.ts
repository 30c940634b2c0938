import fs from 'node:fs';

// /etc/ld.so.cache as glibc's ld.so reads it (format "glibc-ld.so.cache1.1", the only one glibc >= 2.32 writes):
// for a library name, the paths ldconfig found for it in the directories of /etc/ld.so.conf. ld.so consults it
// after DT_RPATH and DT_RUNPATH and before its default directories. A file in another format, or none, leaves
// only the default directories, as it does for ld.so; a name ld.so would have found through such a cache is then
// not found here and the launch refused (fail closed). Bounded: the file is read once, at most 4 MiB.

const PATH = '/etc/ld.so.cache';
const MAGIC = 'glibc-ld.so.cache1.1';
const HEADER = 48;
const ENTRY = 24;
const MAX_SIZE = 4 * 1024 * 1024;

/** The flags ld.so accepts for an object of this class and machine (glibc's _DL_CACHE_DEFAULT_ID). */
function cacheId(kind: string): number | undefined {
  switch (kind) {
    case '2:1:62': // ELF64 LE x86-64: FLAG_ELF_LIBC6 | FLAG_X8664_LIB64
      return 0x0303;
    case '2:1:183': // ELF64 LE AArch64: FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64
      return 0x0a03;
    case '1:1:3': // ELF32 LE i386: FLAG_ELF_LIBC6
      return 0x0003;
    default:
      return undefined;
  }
}

interface CacheEntry {
  flags: number;
  name: string;
  path: string;
}

export interface LdCache {
  /** Every path the cache holds for `name` and an object of `kind`, in the cache's order (hwcaps variants first). */
  lookup(name: string, kind: string): string[];
  /** Whether the file was in the format read here. */
  readonly parsed: boolean;
}

function cString(buf: Buffer, at: number): string | undefined {
  if (at >= buf.length) return undefined;
  const end = buf.indexOf(0, at);
  return end < 0 ? undefined : buf.toString('utf8', at, end);
}

/** Parses the cache's bytes; anything malformed yields no entries (ld.so too ignores a cache it cannot read). */
export function parseLdCache(buf: Buffer): CacheEntry[] | undefined {
  if (buf.length < HEADER || buf.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
  const order = buf[28];
  const le = order !== 3; // 2: little-endian, 3: big-endian, 0: unset (the host's, little here)
  const u32 = (o: number): number => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const nlibs = u32(20);
  if (HEADER + nlibs * ENTRY > buf.length) return undefined;
  const out: CacheEntry[] = [];
  for (let i = 0; i < nlibs; i++) {
    const at = HEADER + i * ENTRY;
    const name = cString(buf, u32(at + 4));
    const path = cString(buf, u32(at + 8));
    if (name === undefined || path === undefined) return undefined;
    out.push({ flags: le ? buf.readInt32LE(at) : buf.readInt32BE(at), name, path });
  }
  return out;
}

let memo: { key: string; cache: LdCache } | undefined;

/** The host's ld.so.cache, re-read when its inode or mtime changed (ldconfig replaces it by rename). */
export function hostLdCache(): LdCache {
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(PATH);
  } catch {
    st = undefined;
  }
  const key = st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : 'none';
  if (memo?.key === key) return memo.cache;
  let entries: CacheEntry[] | undefined;
  if (st?.isFile() && st.size <= MAX_SIZE) {
    try {
      entries = parseLdCache(fs.readFileSync(PATH));
    } catch {
      entries = undefined;
    }
  }
  const byName = new Map<string, CacheEntry[]>();
  for (const e of entries ?? []) byName.set(e.name, [...(byName.get(e.name) ?? []), e]);
  const cache: LdCache = {
    parsed: entries !== undefined,
    lookup: (name, kind) => {
      const id = cacheId(kind);
      return id === undefined ? [] : (byName.get(name) ?? []).filter((e) => e.flags === id).map((e) => e.path);
    },
  };
  memo = { key, cache };
  return cache;
}
