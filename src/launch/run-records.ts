import fs from 'node:fs';
import path from 'node:path';
import { WardenError, errnoOf } from '../error.js';
import { recordedCgroup, removeCgroup } from './cgroup.js';
import { isMarker } from './marker.js';
import { startTimeOf } from './proc.js';
import type { SessionTarget } from './session-scan.js';
import type { StopResult } from './kill.js';

// Live sessions are recorded under run/ so that a warden that died (SIGKILL, OOM) does not leave its server
// running forever: the next start (and the daemon) sweeps every session whose supervisor is gone. A record
// carries the start times of the supervisor and of the group leader, so a reused pid is never mistaken for
// ours, and the session's marker and cgroup, so descendants that left the group are found too.
//
// The sweep kills on a record's word, so a record is acted on only if no other user could have written it:
// run/ must be a real directory owned by the warden's uid and writable by no one else (else nothing is read
// and the caller refuses), and each record a regular file (opened with O_NOFOLLOW) owned by the warden's uid
// and not group- or world-writable (else it is skipped and reported, never acted on, never removed).

export interface RunRecord {
  serverId: string;
  pgid: number;
  leaderStart: string;
  supervisorPid: number;
  supervisorStart: string;
  startedAt: string;
  /** The session marker in the server's environment (marker.ts). */
  marker?: string;
  /** The session's cgroup directory, when it has one (cgroup.ts). */
  cgroup?: string;
  /** The server's real uid at launch. */
  uid?: number;
}

const uid = typeof process.getuid === 'function' ? process.getuid() : 0;

function recordFile(runDir: string, pgid: number): string {
  return path.join(runDir, `${pgid}.json`);
}

/** Throws FILE_INSECURE unless run/ is a real directory of the warden's uid that no one else can write. */
export function checkRunDir(runDir: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(runDir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw new WardenError('FILE_UNREADABLE', `cannot inspect the run directory ${runDir}: ${String(err)}`);
  }
  const fix = `Inspect its records, then run: rm -rf ${runDir} (the warden makes a new one) or chown ${uid} ${runDir} && chmod 700 ${runDir}`;
  if (!st.isDirectory()) throw new WardenError('FILE_INSECURE', `the run directory ${runDir} is not a real directory (a symbolic link or a file); the warden kills processes on its records' word. ${fix}`);
  if (st.uid !== uid) throw new WardenError('FILE_INSECURE', `the run directory ${runDir} is owned by uid ${st.uid}, not by the warden's uid ${uid}, so its records cannot be trusted. ${fix}`);
  if (st.mode & 0o022) throw new WardenError('FILE_INSECURE', `the run directory ${runDir} is writable by others (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}), so anyone could plant a record that makes the warden kill a process. ${fix}`);
}

export function writeRunRecord(runDir: string, rec: RunRecord): void {
  checkRunDir(runDir);
  const fd = fs.openSync(recordFile(runDir, rec.pgid), fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeSync(fd, JSON.stringify(rec) + '\n');
  } finally {
    fs.closeSync(fd);
  }
}

export function removeRunRecord(runDir: string, pgid: number): void {
  fs.rmSync(recordFile(runDir, pgid), { force: true });
}

export interface SweptSession {
  serverId: string;
  pgid: number;
  stop: StopResult;
}

export interface RefusedRecord {
  file: string;
  reason: string;
}

type Read = { rec: RunRecord } | { refused: string } | { invalid: true };

/** Reads a record only if no other user could have written it. */
function readRecord(file: string): Read {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    if (errnoOf(err) === 'ELOOP') return { refused: 'it is a symbolic link' };
    return { invalid: true };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { refused: 'it is not a regular file' };
    if (st.uid !== uid) return { refused: `it is owned by uid ${st.uid}, another user than the warden's uid ${uid}` };
    if (st.mode & 0o022) return { refused: `it is writable by group or others (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')})` };
    const rec = JSON.parse(fs.readFileSync(fd, 'utf8')) as RunRecord;
    return Number.isInteger(rec.pgid) && rec.pgid > 1 ? { rec } : { invalid: true };
  } catch {
    return { invalid: true };
  } finally {
    fs.closeSync(fd);
  }
}

/** What a record of a dead supervisor lets the sweep look for. */
function targetOf(rec: RunRecord): SessionTarget {
  const leaderStart = startTimeOf(rec.pgid);
  // If a process now holds the leader's pid but started at another time, the group is gone and the pid reused.
  const reused = leaderStart !== undefined && leaderStart !== rec.leaderStart;
  const uids = [uid];
  if (Number.isInteger(rec.uid) && rec.uid !== uid) uids.push(rec.uid as number);
  return { pgid: reused ? undefined : rec.pgid, marker: isMarker(rec.marker) ? rec.marker : undefined, cgroup: recordedCgroup(rec.cgroup), uids };
}

/**
 * Kills the sessions of supervisors that died and removes their records (a session that survived SIGKILL
 * keeps its record for the next sweep). Throws FILE_INSECURE if run/ itself is insecure; skips and returns the
 * records another user could have written.
 */
export async function sweepOrphans(runDir: string, kill: (t: SessionTarget) => Promise<StopResult>): Promise<{ swept: SweptSession[]; refused: RefusedRecord[] }> {
  checkRunDir(runDir);
  const out = { swept: [] as SweptSession[], refused: [] as RefusedRecord[] };
  let names: string[];
  try {
    names = fs.readdirSync(runDir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return out;
  }
  for (const name of names) {
    const file = path.join(runDir, name);
    const read = readRecord(file);
    if ('refused' in read) {
      out.refused.push({ file, reason: read.refused });
      continue;
    }
    if ('invalid' in read) {
      fs.rmSync(file, { force: true });
      continue;
    }
    const { rec } = read;
    if (startTimeOf(rec.supervisorPid) === rec.supervisorStart) continue; // its supervisor still runs
    const target = targetOf(rec);
    const stop = await kill(target);
    if (stop.pids.length > 0) out.swept.push({ serverId: rec.serverId, pgid: rec.pgid, stop });
    if (stop.gone) {
      if (target.cgroup) await removeCgroup({ dir: target.cgroup });
      fs.rmSync(file, { force: true });
    }
  }
  return out;
}

export interface EndedSession {
  serverId: string;
  supervisorPid: number;
  pgid: number;
}

/**
 * Asks the live sessions of `serverIds` to end: SIGTERM to each session's `run` (its supervisor), which stops
 * its server's group and exits as on any SIGTERM. Used when a server is withdrawn from this machine; only
 * records the warden's uid wrote are read, and a supervisor is signalled only while its start time is the
 * recorded one (a reused pid is left alone).
 */
export function endSessionsOf(runDir: string, serverIds: ReadonlySet<string>): EndedSession[] {
  if (serverIds.size === 0) return [];
  checkRunDir(runDir);
  let names: string[];
  try {
    names = fs.readdirSync(runDir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const ended: EndedSession[] = [];
  for (const name of names) {
    const read = readRecord(path.join(runDir, name));
    if (!('rec' in read) || !serverIds.has(read.rec.serverId)) continue;
    const { rec } = read;
    if (!Number.isInteger(rec.supervisorPid) || rec.supervisorPid <= 1 || rec.supervisorPid === process.pid) continue;
    if (startTimeOf(rec.supervisorPid) !== rec.supervisorStart) continue;
    try {
      process.kill(rec.supervisorPid, 'SIGTERM');
      ended.push({ serverId: rec.serverId, supervisorPid: rec.supervisorPid, pgid: rec.pgid });
    } catch {
      // Gone between the check and the signal: nothing to end.
    }
  }
  return ended;
}
