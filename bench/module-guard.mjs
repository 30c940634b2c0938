// The launch cost of the module guard (docs/adr/0014-module-guard-preload.md): spawn to initialize result of
// a server started directly by node: plain, with a no-op `module.register()` hook (node 20's loader thread
// alone: the floor under the guard), and with `--import <guard>` and its attested set written to the gate on
// fd 3 at once, interleaved. The set is the one the warden computes for the launch (script, tree, modules).
//   node bench/module-guard.mjs [--launches N]      (needs a build: npm run build)
//   node bench/module-guard.mjs --concurrent N [--rounds R]: N at once, each server behind a raw relay
//   (bench/raw-relay.mjs, as the 10-at-once start-up of bench/run.mjs measures its baseline), plain node against
//   node with the no-op hook, rounds interleaved: what node 20's loader thread alone costs a client that starts
//   N servers, against the issue 13 target (the warden within 1.2x of N raw relays).
//   --node PATH: the servers' node (default: the one running this bench). On node 22.15+ the guard's hooks run
//   in the loading thread (docs/adr/0032-in-thread-module-hooks.md); the no-op hook is still module.register().
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { planLaunch } = await import(path.join(ROOT, 'dist/attest/plan.js'));
const { attestedFiles } = await import(path.join(ROOT, 'dist/attest/module-set.js'));
const { prepareModuleGuard } = await import(path.join(ROOT, 'dist/launch/module-guard.js'));
const n = process.argv.indexOf('--node');
const NODE = n > 0 ? path.resolve(process.argv[n + 1]) : process.execPath;
const i = process.argv.indexOf('--launches');
const LAUNCHES = i > 0 ? Number(process.argv[i + 1]) : 10;
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) + '\n';

function timeToInit(args, extraStdio = [], guard) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(NODE, args, { stdio: ['pipe', 'pipe', 'ignore', ...extraStdio], env: { PATH: '/usr/bin:/bin' } });
    if (guard) guard.release(child.stdio[3], guard.files).catch(reject);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('"id":1')) {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        child.kill('SIGKILL');
        resolve(ms);
      }
    });
    child.once('exit', (code) => (out.includes('"id":1') ? null : reject(new Error(`exited ${code} before initialize`))));
    child.stdin.on('error', () => {});
    child.stdin.write(INIT);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const flag = (name, d) => {
  const k = process.argv.indexOf(`--${name}`);
  return k > 0 ? Number(process.argv[k + 1]) : d;
};
const CONCURRENT = flag('concurrent', 0);
const servers = {
  'one-file (test/servers/basic.mjs)': [path.join(ROOT, 'test/servers/basic.mjs')],
  'server-everything': [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
};
for (const [name, argv] of Object.entries(servers)) {
  const plan = await planLaunch({ serverId: 'bench', command: NODE, args: argv, cwd: undefined, trustedPath: path.dirname(NODE) });
  const files = attestedFiles(plan);
  const plain = [];
  const noop = [];
  const guarded = [];
  const NOOP = ['--import', pathToFileURL(path.join(ROOT, 'bench/lib/noop-register.mjs')).href];
  await timeToInit(plan.args); // warm the page cache
  if (CONCURRENT > 0) {
    const RELAY = path.join(ROOT, 'bench/raw-relay.mjs');
    const allAt = async (args) => {
      const t0 = process.hrtime.bigint();
      await Promise.all(Array.from({ length: CONCURRENT }, () => timeToInit([RELAY, NODE, ...args])));
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const plainAll = [];
    const noopAll = [];
    for (let r = 0; r < flag('rounds', 5); r++) {
      plainAll.push(await allAt(plan.args));
      noopAll.push(await allAt([...NOOP, ...plan.args]));
    }
    console.log(`${name}: ${CONCURRENT} at once behind raw relays, ${plainAll.length} rounds each, interleaved (all initialized, ms)`);
    console.log(`  plain node:          median ${median(plainAll).toFixed(0)} (${plainAll.map((x) => x.toFixed(0)).join(', ')})`);
    console.log(`  no-op hook (floor):  median ${median(noopAll).toFixed(0)} (${noopAll.map((x) => x.toFixed(0)).join(', ')})`);
    console.log(`  floor / raw relays:  ${(median(noopAll) / median(plainAll)).toFixed(2)}x (the target for the warden: 1.2x)`);
    continue;
  }
  for (let n = 0; n < LAUNCHES; n++) {
    plain.push(await timeToInit(plan.args));
    noop.push(await timeToInit([...NOOP, ...plan.args]));
    const g = prepareModuleGuard('bench', 'enforce', '/tmp');
    guarded.push(await timeToInit([...g.args, ...plan.args], g.stdio, { release: g.release, files }));
    g.close();
  }
  const fmt = (xs) => `median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
  console.log(`${name}: ${files.size} files in the attested set, ${LAUNCHES} launches each, interleaved`);
  console.log(`  without guard:     ${fmt(plain)}`);
  console.log(`  no-op hook (floor): ${fmt(noop)}`);
  console.log(`  with guard:        ${fmt(guarded)}`);
  console.log(`  cost of the guard: ${(median(guarded) - median(plain)).toFixed(1)} ms, of which node's loader thread (no-op hook): ${(median(noop) - median(plain)).toFixed(1)} ms (median differences)`);
}
