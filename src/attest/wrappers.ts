import path from 'node:path';
import { WardenError } from '../error.js';

// Programs that run another program given on their command line. The warden digests and verifies the program
// it starts; in front of a wrapper, that is the wrapper, and what it runs (often `node server.mjs`) is neither
// digested nor guarded. A wrapper that execs is caught at launch (EXEC_HANDED_OFF) and one that forks by the
// stdio-holder check (STREAM_HELD_ELSEWHERE), but by then the undigested server has started: the known ones
// are refused before anything runs, with the command to enroll instead. What they add, the warden mostly does
// itself: its own process group and cgroup, a bounded life, a minimal environment (`--env` for variables).

const FORKING = new Set([
  'timeout', 'flock', 'dbus-run-session', 'dbus-launch', 'bwrap', 'firejail', 'sudo', 'doas', 'su', 'runuser',
  'pkexec', 'script', 'unbuffer', 'xvfb-run', 'strace', 'ltrace', 'gdb', 'valgrind', 'time', 'watch', 'xargs',
  'parallel', 'tini', 'dumb-init', 'catatonit', 'systemd-run', 'sg', 'newgrp', 'faketime', 'proot', 'fakeroot',
  'rr', 'perf',
]);
const EXECING = new Set([
  'env', 'nice', 'nohup', 'stdbuf', 'taskset', 'ionice', 'chrt', 'setsid', 'chroot', 'unshare', 'nsenter',
  'setpriv', 'numactl', 'cgexec', 'prlimit', 'setarch', 'linux32', 'linux64', 'systemd-inhibit', 'schedtool',
  'trickle', 'torsocks', 'proxychains', 'proxychains4',
]);
const ELSEWHERE = new Set(['docker', 'podman', 'nerdctl', 'kubectl', 'lxc-execute', 'lxc-attach', 'ssh', 'distrobox', 'toolbox', 'flatpak', 'snap', 'wsl']);

// Programs that run another program inside their own process: the kernel's exe stays theirs, so neither the
// executable check nor the stdout check sees what runs (the dynamic loader run as a command, emulators), and
// multi-call binaries called by their own name (`busybox sh script`, `busybox timeout …`), where the first
// argument picks the program. Called through an applet's name (a symlink `sh` -> busybox), the name is what
// the other checks read, as for any command.
const IN_PROCESS = /^(?:ld-linux[\w.-]*\.so(?:\.\d+)*|ld-musl-[\w.-]*\.so(?:\.\d+)*|ld\.so(?:\.\d+)*|ld64\.so(?:\.\d+)*|qemu-[\w.-]+|box64|box86)$/;
const MULTI_CALL = new Set(['busybox', 'toybox']);

/** Refuses a command that runs another program in its own process, or a multi-call binary by its own name. */
function refuseInProcess(serverId: string, command: string, args: string[], resolved?: string): void {
  const names = [path.basename(command), ...(resolved ? [path.basename(resolved)] : [])];
  const loader = names.find((n) => IN_PROCESS.test(n));
  if (loader) {
    throw new WardenError(
      'WRAPPER_COMMAND',
      `server '${serverId}' is launched with ${loader}, which loads and runs another program inside its own process: the warden would digest ${loader}, not the program, and could not tell what runs. Add the program itself: mcp-warden add ${serverId} -- ${wrappedCommand(loader, args)}`,
    );
  }
  if (MULTI_CALL.has(path.basename(command))) {
    const applet = args[0] ?? '<applet>';
    throw new WardenError(
      'WRAPPER_COMMAND',
      `server '${serverId}' is launched as '${path.basename(command)} ${applet.slice(0, 64)}', a multi-call binary whose first argument picks the program: the warden reads the command's name to know what it runs. Call the applet by its own name (the ${applet.slice(0, 64)} link in the trusted PATH): mcp-warden add ${serverId} -- ${args.join(' ').slice(0, 200) || '<applet> <its arguments>'}`,
    );
  }
}

/** The wrapped command line, as well as it can be told from the wrapper's own words, for the advice. */
function wrappedCommand(wrapper: string, args: string[]): string {
  // Skip the wrapper's options, variable assignments (env), durations and numbers (timeout, nice), and the lock
  // file flock takes before the command.
  let rest = args;
  let skipFile = wrapper === 'flock';
  while (rest.length > 0) {
    const a = rest[0] as string;
    if (a.startsWith('-') || a.includes('=') || /^[\d.]+[smhd]?$/.test(a)) rest = rest.slice(1);
    else if (skipFile) [rest, skipFile] = [rest.slice(1), false];
    else break;
  }
  return rest.length > 0 ? rest.join(' ').slice(0, 200) : '<the command it runs>';
}

/** Refuses a command line whose command is a known wrapper of another program. */
export function refuseWrappers(serverId: string, command: string, args: string[], resolved?: string): void {
  refuseInProcess(serverId, command, args, resolved);
  // By the name it is called (a symlink `mytimeout`), and by the file it resolves to (busybox applets, /snap/bin).
  const base = [path.basename(command), ...(resolved ? [path.basename(resolved)] : [])].find((n) => FORKING.has(n) || EXECING.has(n) || ELSEWHERE.has(n));
  if (!base) return;
  if (ELSEWHERE.has(base)) {
    throw new WardenError(
      'WRAPPER_COMMAND',
      `server '${serverId}' is launched with ${base}, which runs the server in a container or on another host: the warden can digest only programs on this machine, so it cannot attest it. Install the server here and add its own command: mcp-warden add ${serverId} -- <program> <its arguments>`,
    );
  }
  const kind = FORKING.has(base) ? 'starts it as a child process of its own' : 'replaces itself with it';
  const extra = base === 'env' ? ` (variables go in --env NAME=VALUE)` : '';
  throw new WardenError(
    'WRAPPER_COMMAND',
    `server '${serverId}' is launched through ${base}, which ${kind}: the warden would digest ${base}, not the server. Add the server's own command instead${extra}: mcp-warden add ${serverId} -- ${wrappedCommand(base, args)}. The warden already runs it in its own process group and cgroup, with a minimal environment.`,
  );
}
