import fs from 'node:fs';
import path from 'node:path';
import { groupMembers, startTimeOf } from './proc.js';

// Live process groups are recorded under run/ so that a warden that died (SIGKILL, OOM) does not leave its
// server running forever: the next start sweeps every group whose supervisor is gone. A record carries the
// start times of the supervisor and of the group leader, so a reused pid is never mistaken for ours.

export interface RunRecord {
  serverId: string;
  pgid: number;
  leaderStart: string;
  supervisorPid: number;
  supervisorStart: string;
  startedAt: string;
}

function recordFile(runDir: string, pgid: number): string {
  return path.join(runDir, `${pgid}.json`);
}

export function writeRunRecord(runDir: string, rec: RunRecord): void {
  fs.writeFileSync(recordFile(runDir, rec.pgid), JSON.stringify(rec) + '\n', { mode: 0o600 });
}

export function removeRunRecord(runDir: string, pgid: number): void {
  fs.rmSync(recordFile(runDir, pgid), { force: true });
}

export interface SweptGroup {
  serverId: string;
  pgid: number;
  pids: number[];
  gone: boolean;
}

function readRecord(file: string): RunRecord | undefined {
  try {
    const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as RunRecord;
    return Number.isInteger(rec.pgid) && rec.pgid > 1 ? rec : undefined;
  } catch {
    return undefined;
  }
}

/** Kills the groups of supervisors that died; removes records of groups already gone. */
export async function sweepOrphans(runDir: string, kill: (pgid: number) => Promise<boolean>): Promise<SweptGroup[]> {
  let names: string[];
  try {
    names = fs.readdirSync(runDir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const swept: SweptGroup[] = [];
  for (const name of names) {
    const file = path.join(runDir, name);
    const rec = readRecord(file);
    if (!rec) {
      fs.rmSync(file, { force: true });
      continue;
    }
    if (startTimeOf(rec.supervisorPid) === rec.supervisorStart) continue; // its supervisor still runs
    const leaderStart = startTimeOf(rec.pgid);
    // If a process now holds the leader's pid but started at another time, the group is gone and the pid reused.
    const pids = leaderStart !== undefined && leaderStart !== rec.leaderStart ? [] : groupMembers(rec.pgid);
    if (pids.length > 0) swept.push({ serverId: rec.serverId, pgid: rec.pgid, pids, gone: await kill(rec.pgid) });
    fs.rmSync(file, { force: true });
  }
  return swept;
}
