// A V8 heap snapshot (.heapsnapshot, as written by --heapsnapshot-signal or v8.writeHeapSnapshot) summarized:
// self sizes by node type, by constructor or name, and the code of each script (its SharedFunctionInfos with
// their bytecode, feedback and scope infos), so that two processes can be compared (bench/run-memory.mjs).
import fs from 'node:fs';

/** Parses a snapshot file into flat arrays and accessors. */
export function readSnapshot(file) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const m = snap.snapshot.meta;
  const nf = m.node_fields.length;
  const ef = m.edge_fields.length;
  const types = m.node_types[0];
  const etypes = m.edge_types[0];
  const N = snap.nodes.length / nf;
  const firstEdge = new Uint32Array(N + 1);
  for (let i = 0, e = 0; i < N; i++) (firstEdge[i] = e), (e += snap.nodes[i * nf + 4] * ef);
  firstEdge[N] = snap.edges.length;
  return {
    N,
    type: (i) => types[snap.nodes[i * nf]],
    name: (i) => snap.strings[snap.nodes[i * nf + 1]],
    size: (i) => snap.nodes[i * nf + 3],
    /** [edge type, edge name, target node index] of node i's outgoing edges. */
    *edges(i) {
      for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) {
        const t = etypes[snap.edges[e]];
        const n = t === 'element' || t === 'hidden' ? snap.edges[e + 1] : snap.strings[snap.edges[e + 1]];
        yield [t, n, snap.edges[e + 2] / nf];
      }
    },
  };
}

const add = (map, k, v) => map.set(k, (map.get(k) ?? 0) + v);
const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);

/**
 * { total, byType, byName, codeByScript, scripts }: self sizes in bytes. Code by script: each SharedFunctionInfo
 * and what only it points to of kind code (bytecode, feedback metadata, scope info, uncompiled data), by the name
 * of the script it belongs to; code not reached that way is "(other code)".
 */
export function summarize(file, { topN = 30 } = {}) {
  const s = readSnapshot(file);
  const byType = new Map();
  const byName = new Map();
  let total = 0;
  for (let i = 0; i < s.N; i++) {
    const t = s.type(i);
    const sz = s.size(i);
    total += sz;
    add(byType, t, sz);
    add(byName, `${t}:${t === 'string' || t === 'concatenated string' || t === 'sliced string' ? '(string)' : s.name(i).slice(0, 60)}`, sz);
  }
  // Scripts: nodes named "system / Script"? V8 names a Script node by its source URL, with type "code" and the
  // edge "source" to its text. Find every SharedFunctionInfo ("system / SharedFunctionInfo" or type code with
  // an edge "script") and charge it and its code-typed children to the script's name.
  const scriptName = new Map();
  for (let i = 0; i < s.N; i++) {
    if (s.type(i) !== 'code') continue;
    for (const [, n, to] of s.edges(i)) if (n === 'source' && s.type(to).includes('string')) scriptName.set(i, s.name(i) || '(anonymous script)');
  }
  const charged = new Uint8Array(s.N);
  const codeByScript = new Map();
  const sourceByScript = new Map();
  for (const [i, name] of scriptName) {
    for (const [, n, to] of s.edges(i)) if (n === 'source') add(sourceByScript, name, s.size(to));
  }
  for (let i = 0; i < s.N; i++) {
    if (s.type(i) !== 'code') continue;
    let script;
    for (const [, n, to] of s.edges(i)) if ((n === 'script' || n === 'script_or_debug_info') && scriptName.has(to)) script = scriptName.get(to);
    if (!script) continue;
    let sz = s.size(i);
    charged[i] = 1;
    for (const [t, , to] of s.edges(i)) {
      if (t === 'weak' || charged[to] || scriptName.has(to)) continue;
      if (s.type(to) === 'code' || s.type(to) === 'array' || s.type(to) === 'hidden') (charged[to] = 1), (sz += s.size(to));
    }
    add(codeByScript, script, sz);
  }
  let otherCode = 0;
  for (let i = 0; i < s.N; i++) if (s.type(i) === 'code' && !charged[i] && !scriptName.has(i)) otherCode += s.size(i);
  codeByScript.set('(other code)', otherCode);
  return { total, byType: top(byType, 50), byName: top(byName, topN), codeByScript: top(codeByScript, topN), sourceByScript: top(sourceByScript, topN) };
}
