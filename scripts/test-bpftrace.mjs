// Brings bpftrace, which test/sandbox/write-denials.test.ts needs (a root warden traces a confined session's
// denied writes with the system's bpftrace: docs/adr/0066), onto a fresh Debian machine, and mounts tracefs where
// nothing did (systemd mounts it at boot; a bare container may not). Run by `pretest` after test-bwrap.mjs, as it
// is: installed with apt-get as root (never a copy the tests fetched); anyone else is told what to install.
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';

const stop = (why) => {
  console.error(`scripts/test-bpftrace.mjs: ${why} test/sandbox/write-denials needs bpftrace on the trusted path and tracefs mounted: apt-get install bpftrace; mount -t tracefs nodev /sys/kernel/tracing; then run npm test again.`);
  process.exit(1);
};
const present = () => ['/usr/bin/bpftrace', '/usr/local/bin/bpftrace'].some((f) => fs.existsSync(f));
const traced = () => ['/sys/kernel/tracing/events/raw_syscalls', '/sys/kernel/debug/tracing/events/raw_syscalls'].some((f) => fs.existsSync(f));

if (!present()) {
  if (process.getuid?.() !== 0) stop('bpftrace is missing and this is not root.');
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) stop('bpftrace is missing and apt-get is not available.');
  console.error('scripts/test-bpftrace.mjs: installing bpftrace (apt-get install bpftrace) for test/sandbox/write-denials');
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'bpftrace'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (install().status !== 0) stop('apt-get install bpftrace failed.');
  }
  if (!present()) stop('apt-get installed bpftrace, but /usr/bin/bpftrace is not there.');
}
if (!traced() && process.getuid?.() === 0) {
  console.error('scripts/test-bpftrace.mjs: mounting tracefs at /sys/kernel/tracing for test/sandbox/write-denials');
  spawnSync('mount', ['-t', 'tracefs', 'nodev', '/sys/kernel/tracing'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
if (!traced()) stop('tracefs is not mounted.');
