import type { BigIntStats } from 'node:fs';

/** What identifies a file's content without reading it: ctime cannot be set from user space. */
export interface StatKey {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

export function statKey(st: BigIntStats): StatKey {
  return {
    dev: st.dev.toString(),
    ino: st.ino.toString(),
    size: st.size.toString(),
    mtimeNs: st.mtimeNs.toString(),
    ctimeNs: st.ctimeNs.toString(),
  };
}

export function sameKey(a: StatKey, b: StatKey): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** The same inode on the same device (content may still differ). */
export function sameInode(a: StatKey, b: StatKey): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** A stat key as one comparable string. */
export function keyString(k: StatKey): string {
  return `${k.dev}:${k.ino}:${k.size}:${k.mtimeNs}:${k.ctimeNs}`;
}
