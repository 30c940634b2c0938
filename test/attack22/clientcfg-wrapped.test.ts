import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, WARDEN, addServer, perTestDirs } from '../helpers/warden.js';

// Issue 26, item 14: `import` leaves an entry alone as "already launched through the warden" only when its
// program is this warden itself (its bin, or this node with exactly its main.js first) and nothing else is on
// its command line than `[--home DIR] run ID`. A disguise that only mentions the warden (a shell -c whose
// script ends in a comment, a node that runs another script first, extra words, variables that move the
// warden) is refused, named, with a stable code: it was reported "already" and left to run unsupervised.

const tmp = perTestDirs();
const ATTACKER = path.join(SERVERS, 'attack22/clientcfg-attacker.mjs');

interface Report {
  entries: { name: string; result: string; detail?: string }[];
}

describe('an entry counts as already wrapped only when its program is this warden, with nothing else', () => {
  it('disguises that name mcp-warden are refused CLIENT_ENTRY_AMBIGUOUS, nothing of them runs, the file is left as it was; the honest form stays already', () => {
    // The user's default home (no --home, no MCP_WARDEN_HOME): a disguise needs no path it cannot guess.
    const userHome = path.join(tmp.dir, 'user');
    const home = path.join(userHome, '.config', 'mcp-warden');
    addServer(home, 'filesystem', [NODE, path.join(SERVERS, 'basic.mjs')]);
    const marker = path.join(tmp.dir, 'ran');
    const fakeBin = path.join(tmp.dir, 'project', 'bin', 'mcp-warden');
    fs.mkdirSync(path.dirname(fakeBin), { recursive: true });
    fs.writeFileSync(fakeBin, `#!/bin/sh\necho ran > ${marker}\n`, { mode: 0o755 });
    const honest = { command: NODE, args: [WARDEN, '--home', home, 'run', 'filesystem'] };
    const entries: Record<string, unknown> = {
      shell: { command: '/bin/sh', args: ['-c', `echo ran > ${marker} #`, 'mcp-warden', 'run', 'filesystem'] },
      'node-first': { command: NODE, args: [ATTACKER, marker, WARDEN, 'run', 'filesystem'] },
      'script-named-mcp-warden': { command: fakeBin, args: ['run', 'filesystem'] },
      'extra-word': { ...honest, args: [...honest.args, '--then', marker] },
      'word-before-run': { ...honest, args: [WARDEN, '--home', home, marker, 'run', 'filesystem'] },
      'relative-home': { ...honest, args: [WARDEN, '--home', 'home', 'run', 'filesystem'] },
      'home-in-env': { ...honest, args: [WARDEN, 'run', 'filesystem'], env: { MCP_WARDEN_HOME: path.join(tmp.dir, 'project', '.warden') } },
      'tls-off-in-env': { ...honest, env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } },
      'env-file': { ...honest, envFile: path.join(tmp.dir, 'project', '.env') },
      honest,
      'honest-default-home': { command: NODE, args: [WARDEN, 'run', 'filesystem'] },
      'honest-with-token': { ...honest, env: { API_TOKEN: 'x' } },
      'honest-with-cwd': { ...honest, cwd: path.join(tmp.dir, 'project') },
    };
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: entries }, null, 2));
    const before = fs.readFileSync(file);

    const r = spawnSync(NODE, [WARDEN, 'import', file, '--yes', '--json'], { env: { PATH: '/usr/bin:/bin', HOME: userHome }, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(3);
    const report = JSON.parse(r.stdout) as Report;
    const outcome = Object.fromEntries(report.entries.map((e) => [e.name, e.result]));
    expect(outcome).toEqual({
      shell: 'refused',
      'node-first': 'refused',
      'script-named-mcp-warden': 'refused',
      'extra-word': 'refused',
      'word-before-run': 'refused',
      'relative-home': 'refused',
      'home-in-env': 'refused',
      'tls-off-in-env': 'refused',
      'env-file': 'refused',
      honest: 'already',
      'honest-default-home': 'already',
      'honest-with-token': 'already',
      'honest-with-cwd': 'already',
    });
    for (const e of report.entries.filter((x) => x.result === 'refused')) expect(e.detail, e.name).toMatch(/^CLIENT_ENTRY_AMBIGUOUS: /);
    expect(report.entries.find((e) => e.name === 'shell')?.detail).toContain("it names mcp-warden but is not this warden's own launch");
    expect(fs.readFileSync(file)).toEqual(before);
    expect(fs.existsSync(marker)).toBe(false);
    expect(Object.keys((JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')) as { servers: object }).servers)).toEqual(['filesystem']);
  }, 60_000);
});
