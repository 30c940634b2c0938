import fs from 'node:fs';
import path from 'node:path';

/** Sets servers.json's top-level "writeTracing": "off" in `home` (the operator's switch, docs/adr/0066 "The
 *  switch"): a root warden then starts no bpftrace for its confined launches (~0.23 CPU-s and ~0.5 s of wall
 *  each). For the tests that launch confined servers for other claims than the denied-write report, which keeps
 *  its own tests (test/sandbox/write-denials*.test.ts, test/launch/guard-denials.test.ts). */
export function writeTracingOff(home: string): void {
  const file = path.join(home, 'servers.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...config, writeTracing: 'off' }, null, 2));
}
