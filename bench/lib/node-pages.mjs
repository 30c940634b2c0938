// Which pages of node's own binary a live process has resident (/proc/PID/pagemap, which needs root for the
// present bits), and an account of the pages one process has and another has not: by ELF section and by the
// symbol they fall in (`nm`), V8's C++ code summed by namespace (TurboFan is v8::internal::compiler). For
// bench/run-memory.mjs --pages: on node 24 the relaying `run` has ~11 MB more of node's binary resident than a
// raw relay (docs/adr/0056-launch-on-node-24.md, addendum "TurboFan off in the relay").
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const PAGE = 4096;

/** File offsets of the pages of `binary` resident in process `pid`. */
export function residentPages(pid, binary) {
  const file = fs.realpathSync(binary);
  const pages = new Set();
  const fd = fs.openSync(`/proc/${pid}/pagemap`, 'r');
  try {
    for (const line of fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      if (!line.endsWith(` ${file}`)) continue;
      const [range, , offset] = line.split(/\s+/);
      const [start, end] = range.split('-').map((h) => parseInt(h, 16));
      const n = (end - start) / PAGE;
      const buf = Buffer.alloc(n * 8);
      fs.readSync(fd, buf, 0, n * 8, (start / PAGE) * 8);
      for (let i = 0; i < n; i++) if (buf.readBigUInt64LE(i * 8) >> 63n) pages.add(parseInt(offset, 16) + i * PAGE);
    }
  } finally {
    fs.closeSync(fd);
  }
  return pages;
}

/** MB of the pages in `more` and not in `less`, by section and by the symbols' groups, largest first. */
export function accountPages(binary, more, less) {
  const file = fs.realpathSync(binary);
  const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 29 });
  const segments = run('readelf', ['-l', '-W', file]).split('\n').filter((l) => l.trim().startsWith('LOAD')).map((l) => {
    const f = l.trim().split(/\s+/);
    return { off: parseInt(f[1], 16), vaddr: parseInt(f[2], 16), size: parseInt(f[4], 16) };
  });
  const sections = [...run('readelf', ['-S', '-W', file]).matchAll(/\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)/g)]
    .map((m) => ({ name: m[1], addr: parseInt(m[2], 16), size: parseInt(m[3], 16) }))
    .filter((s) => s.addr);
  const symbols = run('nm', ['-S', '-C', '--defined-only', file]).split('\n').flatMap((l) => {
    const m = /^([0-9a-f]+) ([0-9a-f]+) \S (.*)$/.exec(l);
    return m ? [{ addr: parseInt(m[1], 16), size: parseInt(m[2], 16), name: m[3] }] : [];
  }).sort((a, b) => a.addr - b.addr);
  const symbolAt = (va) => {
    let lo = 0;
    let hi = symbols.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (symbols[mid].addr <= va) lo = mid;
      else hi = mid - 1;
    }
    const s = symbols[lo];
    return s && va < s.addr + Math.max(s.size, PAGE) ? s.name : undefined;
  };
  const group = (name) => {
    if (name === undefined) return '(no symbol)';
    if (/^icu|icudt|\bicu_\d+::/.test(name)) return 'ICU';
    const v8 = /^(?:.*\s)?v8::internal::(\w+)::/.exec(name) ?? /^(?:.*\s)?v8::internal::/.exec(name);
    if (v8) return v8[1] && /^[a-z]/.test(v8[1]) ? `v8::internal::${v8[1]}` : 'v8::internal (other)';
    if (/^(?:.*\s)?(v8|cppgc)::/.test(name)) return 'v8 (other)';
    if (/^(?:.*\s)?node::/.test(name)) return 'node::';
    return 'other';
  };
  const bySection = new Map();
  const byGroup = new Map();
  const add = (map, k) => map.set(k, (map.get(k) ?? 0) + PAGE / 2 ** 20);
  let total = 0;
  for (const off of more) {
    if (less.has(off)) continue;
    total += PAGE / 2 ** 20;
    const seg = segments.find((s) => off >= s.off && off < s.off + s.size);
    const va = seg ? off - seg.off + seg.vaddr : -1;
    add(bySection, sections.find((s) => va >= s.addr && va < s.addr + s.size)?.name ?? '?');
    add(byGroup, group(symbolAt(va)));
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  return { total, bySection: sorted(bySection), byGroup: sorted(byGroup) };
}
