// A newline-delimited JSON-RPC client over a spawned process (the client side of every bench).
import fs from 'node:fs';
import { start, stop } from './procs.mjs';

export const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } };
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 120_000);
const BIG = 64 * 1024;

/** The id of a response line without parsing it (lines of a MiB: the client's JSON.parse would dominate). */
function quickId(line) {
  const ends = line.subarray(0, 160).toString('latin1') + ' ' + line.subarray(Math.max(0, line.length - 160)).toString('latin1');
  const m = /"id":\s*(\d+)\s*[,}]/.exec(ends);
  return m ? Number(m[1]) : undefined;
}

/**
 * Starts `cmd args` and speaks JSON-RPC to it. `request` resolves with the parsed message, or for lines over
 * 64 KiB with `{ id, bytes }` (the line is not parsed). Rejects when the process exits first or after a timeout.
 */
export function session(cmd, args) {
  const t0 = process.hrtime.bigint();
  const child = start(cmd, args);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const waiting = new Map();
  let chunks = [];
  let pending = 0;
  const deliver = (line) => {
    let msg;
    if (line.length > BIG) msg = { id: quickId(line), bytes: line.length };
    else if (process.env.BENCH_TOLERANT) {
      // V8's tracing (--trace-gc, --trace-opt, --trace-deopt in WARDEN_NODE_ARGS, bench/relay-cpu.mjs) writes to
      // the relay's stdout: shown on stderr instead of failing the bench.
      try {
        msg = JSON.parse(line.toString('utf8'));
      } catch {
        process.stderr.write(`[non-JSON] ${line.toString('utf8').trim()}\n`);
        return;
      }
    } else msg = JSON.parse(line.toString('utf8'));
    const w = waiting.get(msg.id);
    if (w) (waiting.delete(msg.id), clearTimeout(w.timer), w.resolve(msg));
  };
  child.stdout.on('data', (d) => {
    let from = 0;
    for (let nl = d.indexOf(10); nl >= 0; nl = d.indexOf(10, from)) {
      const piece = d.subarray(from, nl);
      deliver(chunks.length ? Buffer.concat([...chunks, piece], pending + piece.length) : piece);
      chunks = [];
      pending = 0;
      from = nl + 1;
    }
    if (from < d.length) (chunks.push(d.subarray(from)), (pending += d.length - from));
  });
  child.exited.then(({ code, signal }) => {
    for (const [id, w] of waiting) (clearTimeout(w.timer), w.reject(new Error(`${cmd} ${args.join(' ')} exited (${code ?? signal}) before answering ${id}: ${stderr.trim()}`)));
    waiting.clear();
  });
  let nextId = 1;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => (waiting.delete(id), reject(new Error(`no answer to ${method} in ${TIMEOUT_MS} ms: ${stderr.trim()}`))), TIMEOUT_MS);
      waiting.set(id, { resolve, reject, timer });
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  const notify = (method) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method }) + '\n');
  return { child, pid: child.pid, t0, request, notify, close: () => stop(child), stderr: () => stderr };
}

/** initialize (must be a result, not an error), notifications/initialized; resolves with ms since spawn. */
export async function initialize(s) {
  const r = await s.request('initialize', INIT);
  const ms = Number(process.hrtime.bigint() - s.t0) / 1e6;
  if (!r.result) throw new Error(`initialize refused: ${JSON.stringify(r.error)} ${s.stderr().trim()}`);
  s.notify('notifications/initialized');
  return ms;
}

/** A live session as a client leaves it after start-up: initialized, tools listed (the warden admits calls only after a listing). */
export async function open([cmd, args]) {
  const s = session(cmd, args);
  try {
    await initialize(s);
    const list = await s.request('tools/list', {});
    if (!list.result?.tools?.length) throw new Error(`tools/list: ${JSON.stringify(list).slice(0, 300)} ${s.stderr().trim()}`);
    return s;
  } catch (err) {
    await s.close();
    throw err;
  }
}

/** Spawn → initialize result, in ms; the session is closed (not timed). */
export async function timeToInit([cmd, args]) {
  const s = session(cmd, args);
  try {
    return await initialize(s);
  } finally {
    await s.close();
  }
}

/** Kibibytes → MB of /proc/PID/status VmRSS and VmHWM. */
export function memory(pid) {
  let status = '';
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {}
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}
