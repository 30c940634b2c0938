import fs from 'node:fs';
import { WardenError } from '../error.js';
import { statKey, type StatKey } from './stat-key.js';

// The few facts of an ELF file the dynamic loader acts on: its class, byte order and machine (ld.so skips a
// library of another kind and searches on), its program interpreter (PT_INTERP), and from its dynamic section
// the libraries it needs (DT_NEEDED), its search paths (DT_RPATH, DT_RUNPATH), its soname and DT_FLAGS_1.
// Read by hand from a descriptor with bounded reads: the file is hostile, and a malformed one is refused with
// ELF_INVALID, never a crash (docs/adr/0065-native-libraries.md).

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NULL = 0n;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;
const DT_STRSZ = 10n;
const DT_SONAME = 14n;
const DT_RPATH = 15n;
const DT_RUNPATH = 29n;
const DT_AUXILIARY = 0x7ffffffdn;
const DT_FILTER = 0x7fffffffn;
const DT_DEPAUDIT = 0x6ffffefbn;
const DT_AUDIT = 0x6ffffefcn;
const DT_FLAGS_1 = 0x6ffffffbn;
export const DF_1_NODEFLIB = 0x800n;

/** Caps on what one file may declare (real programs: node has 13 program headers, 40 dynamic entries). */
const MAX_PHNUM = 256;
const MAX_DYN = 4096;
const MAX_NEEDED = 256;
const MAX_STRING = 4096;
const MAX_STRTAB = 16 * 1024 * 1024;

export interface ElfInfo {
  /** Class, byte order and machine as one string ("2:1:62"): a library must match the object that needs it. */
  kind: string;
  interp?: string;
  needed: string[];
  rpath?: string;
  runpath?: string;
  soname?: string;
  /** DT_AUXILIARY and DT_FILTER names: filtees ld.so maps with the object (a missing auxiliary one is skipped). */
  filtees: Array<{ name: string; auxiliary: boolean }>;
  /** DT_AUDIT / DT_DEPAUDIT values: rtld-audit modules, which can redirect every later lookup (refused). */
  audit?: string;
  flags1: bigint;
  /** The stat key of the descriptor that was read: what was parsed is what is digested when the keys match. */
  key: StatKey;
}

class Reader {
  constructor(private readonly fd: number, readonly size: number, private readonly file: string) {}

  bad(what: string): never {
    throw new WardenError('ELF_INVALID', `${this.file} is not a well-formed ELF file (${what}); the loader's view of it cannot be attested. Rebuild or reinstall it.`);
  }

  read(pos: bigint, len: number): Buffer {
    if (pos < 0n || len < 0 || pos + BigInt(len) > BigInt(this.size)) this.bad(`a read of ${len} bytes at ${pos} runs past the end of the file`);
    const b = Buffer.alloc(len);
    const n = fs.readSync(this.fd, b, 0, len, Number(pos));
    if (n !== len) this.bad('a short read');
    return b;
  }
}

/** A name from the file as the path the loader would open: bytes that are not UTF-8 name no file node can open. */
function text(r: Reader, raw: Buffer): string {
  const s = raw.toString('utf8');
  if (!Buffer.from(s, 'utf8').equals(raw)) r.bad('a name that is not UTF-8');
  return s;
}

/** Whether `head` starts with the ELF magic. */
export function isElf(head: Buffer): boolean {
  return head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46;
}

/** The first `max` bytes of `file` and, when they start with the ELF magic, what the dynamic loader needs from it:
 *  one open (O_NOFOLLOW: pass a realpath) for both, so a file replaced between the two cannot be read half each.
 *  With `kind`, an ELF file of another class, byte order or machine is returned unparsed (ld.so skips it). */
export function readElf(file: string, max = 64, kind?: string): { head: Buffer; info?: ElfInfo } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw new WardenError('COMMAND_NOT_FOUND', `cannot open ${file} to read its header: ${(err as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) throw new WardenError('COMMAND_NOT_EXECUTABLE', `${file} is not a regular file; only regular files can be attested.`);
    const buf = Buffer.alloc(Math.max(max, 20));
    const head = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
    if (!isElf(head)) return { head: head.subarray(0, max) };
    if (kind !== undefined && (head.length < 20 || `${head[4]}:${head[5]}:${head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18)}` !== kind)) return { head: head.subarray(0, max) };
    return { head: head.subarray(0, max), info: { ...parseFrom(new Reader(fd, Number(st.size), file)), key: statKey(st) } };
  } finally {
    fs.closeSync(fd);
  }
}

/** Parses what the dynamic loader needs from `file` (a realpath). Throws ELF_INVALID. */
export function parseElf(file: string): ElfInfo {
  const { info } = readElf(file);
  if (!info) throw new WardenError('ELF_INVALID', `${file} is not a well-formed ELF file (no ELF magic); the loader's view of it cannot be attested. Rebuild or reinstall it.`);
  return info;
}

function parseFrom(r: Reader): Omit<ElfInfo, 'key'> {
  if (r.size < 52) r.bad('shorter than an ELF header');
  const id = r.read(0n, 16);
  if (!isElf(id)) r.bad('no ELF magic');
  const is64 = id[4] === 2 ? true : id[4] === 1 ? false : r.bad(`class ${id[4]}`);
  const le = id[5] === 1 ? true : id[5] === 2 ? false : r.bad(`byte order ${id[5]}`);
  const h = r.read(0n, is64 ? 64 : 52);
  const u16 = (b: Buffer, o: number): number => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (b: Buffer, o: number): number => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const u64 = (b: Buffer, o: number): bigint => (le ? b.readBigUInt64LE(o) : b.readBigUInt64BE(o));
  const word = (b: Buffer, o: number): bigint => (is64 ? u64(b, o) : BigInt(u32(b, o)));
  const machine = u16(h, 18);
  const phoff = word(h, is64 ? 32 : 28);
  const phentsize = u16(h, is64 ? 54 : 42);
  const phnum = u16(h, is64 ? 56 : 44);
  if (phnum > MAX_PHNUM) r.bad(`${phnum} program headers, more than ${MAX_PHNUM}`);
  if (phnum > 0 && phentsize < (is64 ? 56 : 32)) r.bad(`program header size ${phentsize}`);
  const loads: Array<{ vaddr: bigint; offset: bigint; filesz: bigint }> = [];
  let dynamic: { offset: bigint; vaddr: bigint; filesz: bigint } | undefined;
  let interp: string | undefined;
  const table = phnum > 0 ? r.read(phoff, phnum * phentsize) : Buffer.alloc(0);
  for (let i = 0; i < phnum; i++) {
    const p = table.subarray(i * phentsize, (i + 1) * phentsize);
    const type = u32(p, 0);
    const offset = word(p, is64 ? 8 : 4);
    const vaddr = word(p, is64 ? 16 : 8);
    const filesz = word(p, is64 ? 32 : 16);
    if (type === PT_LOAD) loads.push({ vaddr, offset, filesz });
    else if (type === PT_DYNAMIC) {
      if (dynamic) r.bad('two PT_DYNAMIC headers');
      dynamic = { offset, vaddr, filesz };
    } else if (type === PT_INTERP) {
      if (interp !== undefined) r.bad('two PT_INTERP headers');
      if (filesz === 0n || filesz > BigInt(MAX_STRING)) r.bad(`a PT_INTERP of ${filesz} bytes`);
      const raw = r.read(offset, Number(filesz));
      const nul = raw.indexOf(0);
      if (nul <= 0) r.bad('a PT_INTERP without its terminating NUL');
      interp = text(r, raw.subarray(0, nul));
    }
  }
  const kind = `${id[4]}:${id[5]}:${machine}`;
  if (!dynamic) return { kind, ...(interp !== undefined ? { interp } : {}), needed: [], filtees: [], flags1: 0n };
  const entSize = is64 ? 16 : 8;
  const count = Number(dynamic.filesz / BigInt(entSize));
  if (count > MAX_DYN) r.bad(`${count} dynamic entries, more than ${MAX_DYN}`);
  // ld.so reads the table at PT_DYNAMIC's address (through the PT_LOAD mapping it) up to DT_NULL, whatever its
  // file offset and size say: read only a table whose offset and address agree within one PT_LOAD, and that ends
  // (DT_NULL) within p_filesz, so the bytes read here are the bytes ld.so reads.
  const dynSeg = loads.find((l) => dynamic.vaddr >= l.vaddr && dynamic.vaddr + dynamic.filesz <= l.vaddr + l.filesz);
  if (!dynSeg || dynamic.offset - dynSeg.offset !== dynamic.vaddr - dynSeg.vaddr) r.bad("a PT_DYNAMIC whose file offset is not where its address is loaded from");
  const dyn = r.read(dynamic.offset, count * entSize);
  const needed: bigint[] = [];
  let strtab: bigint | undefined;
  let strsz: bigint | undefined;
  let rpath: bigint | undefined;
  let runpath: bigint | undefined;
  let soname: bigint | undefined;
  const filteeAt: Array<{ at: bigint; auxiliary: boolean }> = [];
  let audit: bigint | undefined;
  let flags1 = 0n;
  let ended = false;
  for (let i = 0; i < count; i++) {
    const tag = is64 ? (le ? dyn.readBigInt64LE(i * 16) : dyn.readBigInt64BE(i * 16)) : BigInt(le ? dyn.readInt32LE(i * 8) : dyn.readInt32BE(i * 8));
    const val = word(dyn, i * entSize + entSize / 2);
    if (tag === DT_NULL) {
      ended = true;
      break;
    }
    if (tag === DT_NEEDED) {
      if (needed.length >= MAX_NEEDED) r.bad(`more than ${MAX_NEEDED} DT_NEEDED entries`);
      needed.push(val);
    } else if (tag === DT_STRTAB) strtab = val;
    else if (tag === DT_STRSZ) strsz = val;
    else if (tag === DT_RPATH) rpath = val;
    else if (tag === DT_RUNPATH) runpath = val;
    else if (tag === DT_SONAME) soname = val;
    else if (tag === DT_FLAGS_1) flags1 = val;
    else if (tag === DT_AUXILIARY || tag === DT_FILTER) {
      if (filteeAt.length >= MAX_NEEDED) r.bad(`more than ${MAX_NEEDED} DT_AUXILIARY and DT_FILTER entries`);
      filteeAt.push({ at: val, auxiliary: tag === DT_AUXILIARY });
    } else if (tag === DT_AUDIT || tag === DT_DEPAUDIT) audit = val;
  }
  if (!ended) r.bad('a dynamic table without DT_NULL within its PT_DYNAMIC size');
  const anyString = needed.length > 0 || rpath !== undefined || runpath !== undefined || soname !== undefined || filteeAt.length > 0 || audit !== undefined;
  if (!anyString) return { kind, ...(interp !== undefined ? { interp } : {}), needed: [], filtees: [], flags1 };
  if (strtab === undefined || strsz === undefined) r.bad('strings named without DT_STRTAB and DT_STRSZ');
  if (strsz > BigInt(MAX_STRTAB)) r.bad(`a string table of ${strsz} bytes`);
  // DT_STRTAB is an address: the PT_LOAD segment holding it says where it is in the file.
  const seg = loads.find((l) => strtab >= l.vaddr && strtab + strsz <= l.vaddr + l.filesz);
  if (!seg) r.bad('a string table outside every loaded segment');
  const base = strtab - seg.vaddr + seg.offset;
  const str = (at: bigint): string => {
    if (at >= strsz) r.bad(`a string at ${at}, past the string table's ${strsz} bytes`);
    const len = Number(strsz - at < BigInt(MAX_STRING) ? strsz - at : BigInt(MAX_STRING));
    const raw = r.read(base + at, len);
    const nul = raw.indexOf(0);
    if (nul < 0) r.bad(`a string longer than ${MAX_STRING} bytes or without its NUL`);
    return text(r, raw.subarray(0, nul));
  };
  return {
    kind,
    ...(interp !== undefined ? { interp } : {}),
    needed: needed.map(str),
    ...(rpath !== undefined ? { rpath: str(rpath) } : {}),
    ...(runpath !== undefined ? { runpath: str(runpath) } : {}),
    ...(soname !== undefined ? { soname: str(soname) } : {}),
    filtees: filteeAt.map((f) => ({ name: str(f.at), auxiliary: f.auxiliary })),
    ...(audit !== undefined ? { audit: str(audit) } : {}),
    flags1,
  };
}
