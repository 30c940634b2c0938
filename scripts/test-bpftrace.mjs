// Brings bpftrace, which test/sandbox/write-denials.test.ts needs (a root warden traces a confined session's
// denied writes with the system's bpftrace: docs/adr/0066), onto a fresh Debian machine, and mounts tracefs where
// nothing did (systemd mounts it at boot; a bare container may not). Run by `pretest` after test-bwrap.mjs, as it
// is: installed with apt-get as root (scripts/apt-install.mjs; never a copy the tests fetched); anyone else is told
// what to install.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { aptInstall } from './apt-install.mjs';

/** @type {(why: string) => never} */
const stop = (why) => {
  console.error(`scripts/test-bpftrace.mjs: ${why} test/sandbox/write-denials needs bpftrace on the trusted path and tracefs mounted: apt-get install bpftrace; mount -t tracefs nodev /sys/kernel/tracing; then run npm test again.`);
  process.exit(1);
};
const present = () => ['/usr/bin/bpftrace', '/usr/local/bin/bpftrace'].some((f) => fs.existsSync(f));
const traced = () => ['/sys/kernel/tracing/events/raw_syscalls', '/sys/kernel/debug/tracing/events/raw_syscalls'].some((f) => fs.existsSync(f));

if (!present()) aptInstall({ script: 'scripts/test-bpftrace.mjs', pkg: 'bpftrace', tool: 'bpftrace', binary: '/usr/bin/bpftrace', installed: present, purpose: 'test/sandbox/write-denials', stop });
if (!traced() && process.getuid?.() === 0) {
  console.error('scripts/test-bpftrace.mjs: mounting tracefs at /sys/kernel/tracing for test/sandbox/write-denials');
  spawnSync('mount', ['-t', 'tracefs', 'nodev', '/sys/kernel/tracing'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
if (!traced()) stop('tracefs is not mounted.');
