// CPU time (user + sys, every thread) of a process and of its descendants, from /proc (USER_HZ ticks of 10 ms):
// read when a launch has its initialize result, it is what the launch cost the machine, which a loaded machine's
// wall-clock noise does not hide (bench/launch-ab.mjs, as bench/launch-cpu.mjs).
import fs from 'node:fs';

const TICK_MS = 10;

function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}
function children(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** { relay: CPU ms of `pid`, server: CPU ms of all its descendants }. */
export function cpuOfTree(pid) {
  const relay = stat(pid) ?? NaN;
  let server = 0;
  const queue = children(pid);
  while (queue.length) {
    const p = queue.pop();
    server += stat(p) ?? 0;
    queue.push(...children(p));
  }
  return { relay, server };
}
