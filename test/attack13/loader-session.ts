import fs from 'node:fs';
import path from 'node:path';
import { checkTemplate, copyTemplateHome, type TemplateSpec } from '../helpers/enrolled-template.js';
import { markerLibrary } from '../helpers/marker-library.js';
import { addServerWarm } from '../helpers/warm-digest.js';
import { auditEvents, INITIALIZE, RawSession, SERVERS } from '../helpers/warden.js';

// Shared by the module guard's red-team tests (attack13 and after): a hostile server laid out as a package (the
// files it uses inside it, so attested with it), enrolled, and driven through one tool call that loads a file
// from outside the package.

export interface PackageLayout {
  /** The package's name in package.json. */
  name: string;
  /** The server, under test/servers: becomes src/server.mjs. */
  server: string;
  /** Files under test/servers copied into the package, by their name in it (lib/rpc.mjs always is). */
  copies?: Record<string, string>;
  /** Files written into the package, by name: content. */
  writes?: Record<string, string>;
}

/** Lays out dir/work/pkg (package.json of type module, src/server.mjs, lib/rpc.mjs and the rest); returns the server. */
export function layoutServerPackage(dir: string, layout: PackageLayout): string {
  const pkg = path.join(dir, 'work/pkg');
  fs.mkdirSync(path.join(pkg, 'src'), { recursive: true });
  fs.mkdirSync(path.join(pkg, 'lib'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: layout.name, version: '1.0.0', type: 'module' }));
  const put = (name: string, write: (file: string) => void): void => {
    fs.mkdirSync(path.dirname(path.join(pkg, name)), { recursive: true });
    write(path.join(pkg, name));
  };
  for (const [name, from] of Object.entries({ 'lib/rpc.mjs': 'lib/rpc.mjs', ...layout.copies })) put(name, (f) => fs.copyFileSync(path.join(SERVERS, from), f));
  for (const [name, content] of Object.entries(layout.writes ?? {})) put(name, (f) => fs.writeFileSync(f, content));
  const server = path.join(pkg, 'src/server.mjs');
  fs.copyFileSync(path.join(SERVERS, layout.server), server);
  return server;
}

/** test/servers/attack13/loader.mjs with its hooks file and idle worker. */
export function layoutLoader(dir: string): string {
  return layoutServerPackage(dir, { name: 'attack13-loader', server: 'attack13/loader.mjs', copies: { 'lib/hooks-thread.mjs': 'attack13/hooks-thread.mjs', 'lib/idle-worker.mjs': 'attack13/idle-worker.mjs' } });
}

/** layoutLoader's package, enrolled once per run and node (templateCall). */
export const LOADER = loaderTemplate('attack13-loader', layoutLoader);

/** An ES module outside the package that appends `ran` to `marker` when it runs. */
export function outsideEsm(file: string, marker: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(marker)}, 'esm ran\\n');\nexport const description = 'outside';\n`);
  return file;
}

/** A CommonJS file outside the package that appends `cjs ran` to `marker` when it runs. */
export function outsideCjs(file: string, marker: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'cjs ran\\n');\nmodule.exports = { description: 'outside' };\n`);
  return file;
}

/** A shared library outside the package (test/servers/attack13/marker-ext.c) whose constructor appends `native ran` to
 *  `marker` (compiled once per run: test/helpers/marker-library.ts). */
export function outsideSharedLibrary(file: string, marker: string): string {
  return markerLibrary(file, marker);
}

export function markerText(marker: string): string {
  return fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '';
}

export interface CallOutcome {
  /** The warden's exit status. */
  code: number | null;
  stderr: string;
  /** The server's answer to the call ('' when it gave none). */
  answer: string;
  /** module_refused events of the audit log. */
  refused: Record<string, unknown>[];
  /** The server's exit status as the audit log recorded it. */
  serverExit: unknown;
}

/** Enrolls the server as `loader` with `node` (its digest warmed: test/helpers/warm-digest.ts), then calls it
 *  (loaderSession). */
export async function loaderCall(home: string, node: string, server: string, tool: string, args: Record<string, unknown>): Promise<CallOutcome> {
  addServerWarm(home, 'loader', [node, server]);
  return loaderSession(home, tool, args);
}

/** A package layout enrolled as `loader` once per run and node (test/helpers/enrolled-template.ts). */
export function loaderTemplate(name: string, layout: (dir: string) => string): TemplateSpec {
  return { name, layout, id: 'loader' };
}

/** loaderCall of `template`'s package, enrolled with `node` in a copy of its template home at `home`: the same
 *  home loaderCall makes, without enrolling it again. Fails if the session changed the package. */
export async function templateCall(home: string, node: string, template: TemplateSpec, tool: string, args: Record<string, unknown>): Promise<CallOutcome> {
  const enrolled = copyTemplateHome(template, node, home);
  const outcome = await loaderSession(home, tool, args);
  checkTemplate(enrolled);
  return outcome;
}

/** The server enrolled in `home` as `loader`: initializes, calls `tool` with `args`; waits for the end of the
 *  server or its answer (then closes the session). */
export async function loaderSession(home: string, tool: string, args: Record<string, unknown>): Promise<CallOutcome> {
  const s = new RawSession(home, 'loader');
  try {
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: args } }) + '\n');
    await s.until(() => s.proc.exitCode !== null || s.lines().length >= 2, 'the end of the server or its answer');
    s.close();
    const { code } = await s.exited;
    const answer = s.lines().map((l) => l.toString()).find((l) => l.includes('"id":2')) ?? '';
    const events = auditEvents(home);
    return { code, stderr: s.stderr, answer, refused: events.filter((e) => e.event === 'module_refused'), serverExit: events.filter((e) => e.event === 'exit').pop()?.exitCode };
  } finally {
    s.proc.kill('SIGKILL');
  }
}
