import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseElf } from '../../dist/attest/elf.js';
import { neededObjects } from '../../dist/attest/libraries.js';
import { WardenError } from '../../dist/error.js';
import { buildNativeServer } from '../helpers/native-server.js';
import { cli, tempDir } from '../helpers/warden.js';

// The ELF a server names is hostile input: the warden reads its program and dynamic headers by hand to know what
// it loads, and a file that lies about its sizes, counts or offsets is refused with ELF_INVALID, never a crash
// or a read past the end. A search path the warden cannot evaluate is refused with LIBRARY_PATH_UNSUPPORTED.

let dir: string;
let good: Buffer;

beforeAll(() => {
  dir = tempDir('warden-i37-elf-');
  good = fs.readFileSync(buildNativeServer(path.join(dir, 'native')).server);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The offset of the first program header of `type` in a 64-bit little-endian ELF. */
function phdr(buf: Buffer, type: number): number {
  const off = Number(buf.readBigUInt64LE(32));
  for (let i = 0; i < buf.readUInt16LE(56); i++) if (buf.readUInt32LE(off + i * 56) === type) return off + i * 56;
  throw new Error(`no program header of type ${type}`);
}

/** The offset of the dynamic entry with `tag`. */
function dynEntry(buf: Buffer, tag: bigint): number {
  const dyn = Number(buf.readBigUInt64LE(phdr(buf, 2) + 8));
  for (let at = dyn; ; at += 16) {
    const t = buf.readBigInt64LE(at);
    if (t === tag) return at;
    if (t === 0n) throw new Error(`no dynamic entry ${tag}`);
  }
}

/** `parseElf` of a copy of the good server changed by `edit`: the WardenError it throws. */
function refusalOf(name: string, edit: (b: Buffer) => Buffer): WardenError {
  const file = path.join(dir, name);
  fs.writeFileSync(file, edit(Buffer.from(good)));
  try {
    parseElf(file);
  } catch (err) {
    return err as WardenError;
  }
  throw new Error(`${name} was parsed`);
}

describe('an ELF file that lies about its structure', () => {
  it.each([
    ['truncated inside its program headers', (b: Buffer) => b.subarray(0, 100), /runs past the end of the file/],
    ['with 65535 program headers', (b: Buffer) => (b.writeUInt16LE(0xffff, 56), b), /65535 program headers, more than 256/],
    ['with a program header table past the end', (b: Buffer) => (b.writeBigUInt64LE(1n << 40n, 32), b), /runs past the end of the file/],
    ['with a class that is neither 32 nor 64 bits', (b: Buffer) => (b[4] = 7, b), /class 7/],
    ['with a dynamic section of a billion entries', (b: Buffer) => (b.writeBigUInt64LE(16n << 30n, phdr(b, 2) + 32), b), /dynamic entries, more than 4096/],
    ['with its string table outside every loaded segment', (b: Buffer) => (b.writeBigUInt64LE(1n << 44n, dynEntry(b, 5n) + 8), b), /a string table outside every loaded segment/],
    ['with a needed name past its string table', (b: Buffer) => (b.writeBigUInt64LE(1n << 32n, dynEntry(b, 1n) + 8), b), /past the string table/],
    ['with a PT_INTERP of 16 MiB', (b: Buffer) => (b.writeBigUInt64LE(16n << 20n, phdr(b, 3) + 32), b), /a PT_INTERP of 16777216 bytes/],
  ])('is refused with ELF_INVALID when %s', (name, edit, why) => {
    const err = refusalOf(name.replaceAll(' ', '-'), edit);
    expect(err).toBeInstanceOf(WardenError);
    expect(err.code).toBe('ELF_INVALID');
    expect(err.message).toMatch(why);
  });

  it('is refused by `add` with ELF_INVALID (exit 3), and nothing is added', () => {
    const file = path.join(dir, 'truncated-server');
    fs.writeFileSync(file, good.subarray(0, 100), { mode: 0o755 });
    const home = path.join(dir, 'home');
    const r = cli(home, ['add', 'cut', '--yes', '--', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/ELF_INVALID: .*truncated-server is not a well-formed ELF file/);
    expect(fs.existsSync(path.join(home, 'servers.json')) ? fs.readFileSync(path.join(home, 'servers.json'), 'utf8') : '').not.toContain('"cut"');
  });
});

describe('a search path the warden does not evaluate', () => {
  it.each([
    ['$LIB', '$LIB/x'],
    ['$PLATFORM', '/opt/$PLATFORM'],
    ['a relative directory', 'lib'],
  ])('refuses the launch with LIBRARY_PATH_UNSUPPORTED when the RUNPATH names %s', (_what, runpath) => {
    const { server } = buildNativeServer(path.join(dir, `rp-${runpath.replaceAll(/\W/g, '_')}`), [`-Wl,-rpath,${runpath}`, '-Wl,--enable-new-dtags']);
    expect(() => neededObjects(server, parseElf(server))).toThrow(expect.objectContaining({ code: 'LIBRARY_PATH_UNSUPPORTED' }));
  });
});
