// The plain-run test of a long string in WebAssembly SIMD: one pass over the bytes that finds any byte below
// 0x20, from 0x80, '"' or '\' (docs/adr/0031-simd-plain-run.md). In JavaScript the same test is a native ASCII
// scan, two native searches and a loop over 32-bit words (plain-run.ts), ~0.28 ms a MiB; here it is ~0.09 ms, the
// copy into the module's memory included. The bytes are copied in windows of WINDOW bytes into one page of the
// module's own memory: nothing of the input stays there once the call returns, and the memory never grows.
//
// The module, in text form (every instruction below is encoded by hand in MODULE, in this order):
//
//   (module
//     (import "m" "mem" (memory 1))
//     (func (export "bad") (param $p i32) (param $n i32) (result i32)   ;; $n: a multiple of 64
//       (local $end i32) (local $acc v128) (local $v v128) (local $c20 v128) (local $c22 v128) (local $c5c v128)
//       (local.set $end (i32.add (local.get $p) (local.get $n)))
//       (local.set $c20 (i8x16.splat (i32.const 0x20)))
//       (local.set $c22 (i8x16.splat (i32.const 0x22)))
//       (local.set $c5c (i8x16.splat (i32.const 0x5c)))
//       (block $done (loop $next
//         (br_if $done (i32.gt_u (i32.add (local.get $p) (i32.const 64)) (local.get $end)))
//         ;; four times, at offsets 0, 16, 32 and 48:
//         (local.set $v (v128.load offset=K align=1 (local.get $p)))
//         (local.set $acc (v128.or (local.get $acc) (v128.or (v128.or
//           (i8x16.lt_s (local.get $v) (local.get $c20))     ;; signed: below 0x20, and every byte from 0x80
//           (i8x16.eq (local.get $v) (local.get $c22)))
//           (i8x16.eq (local.get $v) (local.get $c5c)))))
//         (local.set $p (i32.add (local.get $p) (i32.const 64)))
//         (br $next)))
//       (v128.any_true (local.get $acc))))

/** Bytes copied into the module's memory and scanned per call: one 64 KiB page. */
const WINDOW = 65536;
/** Bytes the module scans per step. */
const STEP = 64;
/** A byte that passes the test: it pads a window's last step. */
const PLAIN_BYTE = 0x61;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};
/** i32.const of a value in 0..0x7f (signed LEB128: one byte below 0x40, two from it). */
const i32 = (v: number): number[] => [0x41, ...(v < 0x40 ? [v] : [(v & 0x7f) | 0x80, v >> 7])];
const simd = (op: number): number[] => [0xfd, ...leb(op)];
const get = (local: number): number[] => [0x20, local];
const set = (local: number): number[] => [0x21, local];
const section = (id: number, body: number[]): number[] => [id, ...leb(body.length), ...body];
const name = (s: string): number[] => [...leb(s.length), ...Buffer.from(s, 'latin1')];

const [P, N, END, ACC, V, C20, C22, C5C] = [0, 1, 2, 3, 4, 5, 6, 7];
const V128_LOAD = 0x00, I8X16_SPLAT = 0x0f, I8X16_EQ = 0x23, I8X16_LT_S = 0x25, V128_OR = 0x50, V128_ANY_TRUE = 0x53;
const I32_ADD = 0x6a, I32_GT_U = 0x4b, BLOCK = 0x02, LOOP = 0x03, EMPTY = 0x40, BR = 0x0c, BR_IF = 0x0d, END_OP = 0x0b;

const step = (offset: number): number[] => [
  ...get(P), ...simd(V128_LOAD), 0x00, ...leb(offset), ...set(V),
  ...get(ACC),
  ...get(V), ...get(C20), ...simd(I8X16_LT_S),
  ...get(V), ...get(C22), ...simd(I8X16_EQ), ...simd(V128_OR),
  ...get(V), ...get(C5C), ...simd(I8X16_EQ), ...simd(V128_OR),
  ...simd(V128_OR), ...set(ACC),
];

const BODY = [
  2, 1, 0x7f, 5, 0x7b, // locals: one i32 ($end), five v128
  ...get(P), ...get(N), I32_ADD, ...set(END),
  ...i32(0x20), ...simd(I8X16_SPLAT), ...set(C20),
  ...i32(0x22), ...simd(I8X16_SPLAT), ...set(C22),
  ...i32(0x5c), ...simd(I8X16_SPLAT), ...set(C5C),
  BLOCK, EMPTY, LOOP, EMPTY,
  ...get(P), ...i32(STEP), I32_ADD, ...get(END), I32_GT_U, BR_IF, 1,
  ...step(0), ...step(16), ...step(32), ...step(48),
  ...get(P), ...i32(STEP), I32_ADD, ...set(P),
  BR, 0,
  END_OP, END_OP,
  ...get(ACC), ...simd(V128_ANY_TRUE),
  END_OP,
];

const MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, // "\0asm", version 1
  ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f]), // type 0: (i32, i32) -> i32
  ...section(2, [1, ...name('m'), ...name('mem'), 0x02, 0x00, 1]), // import a memory of at least one page
  ...section(3, [1, 0]), // one function, of type 0
  ...section(7, [1, ...name('bad'), 0x00, 0]), // export it as "bad"
  ...section(10, [1, ...leb(BODY.length), ...BODY]),
]);

// The part of the WebAssembly global used here (the project's TypeScript lib has no DOM or WebAssembly types).
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
};

interface Scanner {
  bad: (p: number, n: number) => number;
  page: Uint8Array;
}

let scanner: Scanner | null | undefined;

/** The module, made on first use; null where this node cannot run it (WebAssembly or SIMD unavailable). */
function load(): Scanner | null {
  if (scanner !== undefined) return scanner;
  try {
    const mem = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(MODULE), { m: { mem } });
    scanner = { bad: instance.exports.bad as Scanner['bad'], page: new Uint8Array(mem.buffer) };
  } catch {
    scanner = null;
  }
  return scanner;
}

/** True when the SIMD scan is available here (plainInWasm then answers). */
export function simdScanAvailable(): boolean {
  return load() !== null;
}

/** True when `b` holds only ASCII bytes from 0x20 that are neither '"' nor '\'; undefined when the SIMD scan is
 *  not available (the caller then tests in JavaScript). */
export function plainInWasm(b: Uint8Array): boolean | undefined {
  const s = load();
  if (s === null) return undefined;
  const { page, bad } = s;
  for (let at = 0; at < b.length; at += WINDOW) {
    const n = Math.min(WINDOW, b.length - at);
    page.set(at === 0 && n === b.length ? b : b.subarray(at, at + n), 0);
    const whole = Math.ceil(n / STEP) * STEP;
    if (whole !== n) page.fill(PLAIN_BYTE, n, whole);
    if (bad(0, whole) !== 0) return false;
  }
  return true;
}
