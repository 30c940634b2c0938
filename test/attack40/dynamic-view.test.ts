import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseElf } from '../../dist/attest/elf.js';
import { neededObjects } from '../../dist/attest/libraries.js';
import { WardenError } from '../../dist/error.js';
import { buildNativeServer } from '../helpers/native-server.js';
import { tempDir } from '../helpers/warden.js';

// Review 17: attest/elf.ts reads a program's dynamic section from PT_DYNAMIC's file offset, p_filesz / entry size
// entries of it. ld.so reads it from PT_DYNAMIC's *address* (p_vaddr, mapped by a PT_LOAD) and walks it to
// DT_NULL whatever p_filesz says. A program whose PT_DYNAMIC says 0 bytes, or whose p_offset points at a decoy
// table, runs as before (the kernel and ld.so do not care) and loads its libraries, while the warden sees none:
// lib/libwl.so (found through RUNPATH=$ORIGIN/lib) is neither digested at `add` nor judged at `run`, and a
// rebuilt one runs under an allowed launch. The warden's view must be the loader's, or the file refused.

let dir: string;
let good: Buffer;
let lib: string;

beforeAll(() => {
  dir = tempDir('warden-i40-dyn-');
  const built = buildNativeServer(path.join(dir, 'native'));
  good = fs.readFileSync(built.server);
  lib = built.lib;
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The offset of the PT_DYNAMIC program header of a 64-bit little-endian ELF. */
function dynamicHeader(buf: Buffer): number {
  const off = Number(buf.readBigUInt64LE(32));
  for (let i = 0; i < buf.readUInt16LE(56); i++) if (buf.readUInt32LE(off + i * 56) === 2) return off + i * 56;
  throw new Error('no PT_DYNAMIC');
}

/** A copy of the good server changed by `edit`, beside the original (its RUNPATH finds the same lib/libwl.so). */
function variant(name: string, edit: (b: Buffer) => Buffer): string {
  const file = path.join(dir, 'native', name);
  fs.writeFileSync(file, edit(Buffer.from(good)), { mode: 0o755 });
  return file;
}

/** What the warden finds the program loads: the needed names, or the code it refused the file with. */
function wardenView(file: string): string[] | string {
  try {
    return neededObjects(file, parseElf(file)).map((o) => o.realpath);
  } catch (err) {
    if (err instanceof WardenError) return err.code;
    throw err;
  }
}

describe('a program whose PT_DYNAMIC header disagrees with the dynamic table ld.so reads', () => {
  it.each([
    ['says its dynamic section is 0 bytes long', (b: Buffer) => (b.writeBigUInt64LE(0n, dynamicHeader(b) + 32), b)],
    ['points its file offset at a decoy table without the RUNPATH library', (b: Buffer) => {
      const ph = dynamicHeader(b);
      const at = Number(b.readBigUInt64LE(ph + 8));
      const size = Number(b.readBigUInt64LE(ph + 32));
      const decoy = Buffer.from(b.subarray(at, at + size));
      for (let e = 0; e < size; e += 16) if (decoy.readBigInt64LE(e) === 1n) { decoy.writeBigInt64LE(21n, e); break; } // its first DT_NEEDED (libwl.so) becomes DT_DEBUG
      const pad = Buffer.alloc((8 - (b.length % 8)) % 8);
      const out = Buffer.concat([b, pad, decoy]);
      out.writeBigUInt64LE(BigInt(b.length + pad.length), ph + 8);
      return out;
    }],
  ])('that %s is refused ELF_INVALID or seen loading its library, as ld.so loads it', (name, edit) => {
    const file = variant(name.replaceAll(' ', '-'), edit);
    // ld.so loads lib/libwl.so for it (the server says which build it got, on stderr, before it reads stdin).
    const direct = execFileSync('sh', ['-c', '"$0" </dev/null 2>&1 >/dev/null', file], { encoding: 'utf8', timeout: 10_000 });
    expect(direct).toContain('library native-v1');
    const view = wardenView(file);
    expect(view === 'ELF_INVALID' || (Array.isArray(view) && view.includes(fs.realpathSync(lib))), `the warden's view: ${JSON.stringify(view)}`).toBe(true);
  });
});
