import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, ROOT, SERVERS, WARDEN, cli, tempDir } from '../helpers/warden.js';

// `import` and `unwrap` of Codex CLI's config.toml (test/fixtures/clients/README.md), through the CLI: a dry run
// writes nothing, the import enrolls the one stdio server it can and edits only that entry's values, a client
// starts the rewritten entry (the variable env_vars forwards reaches the server), importing again changes
// nothing, and unwrap gives the original bytes back. One enrollment for the whole file (steps share the home).

let dir = '';
let file = '';
let original = '';
const home = (): string => path.join(dir, 'home');
beforeAll(() => {
  dir = tempDir();
  file = path.join(dir, '.codex', 'config.toml');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  original = fs.readFileSync(path.join(ROOT, 'test/fixtures/clients/codex/.codex/config.toml'), 'utf8').replaceAll('@NODE@', NODE).replaceAll('@SERVERS@', SERVERS);
  fs.writeFileSync(file, original, { mode: 0o644 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Report {
  client: string;
  diff?: string;
  entries: { name: string; id?: string; result: string; detail?: string }[];
}
const run = (args: string[]): { code: number | null; report: Report; stderr: string } => {
  const r = cli(home(), [...args, '--json']);
  return { code: r.code, report: JSON.parse(r.stdout || '{}') as Report, stderr: r.stderr };
};
const results = (r: Report): Record<string, string> => Object.fromEntries(r.entries.map((e) => [e.name, e.result]));

describe("import and unwrap of Codex CLI's config.toml", () => {
  it('a dry run shows the edit as a diff, refuses env_vars from a remote source and an entry written as an inline table, and writes nothing', () => {
    const { code, report, stderr } = run(['import', file, '--dry-run']);
    expect(stderr).toBe('');
    expect(code).toBe(3);
    expect(report.client).toBe('codex');
    expect(results(report)).toEqual({ inline: 'refused', basic: 'imported', 'host-tools': 'refused', figma: 'remote' });
    expect(report.diff).toContain(`+args = ["${WARDEN}", "--home", "${home()}", "run", "basic"]`);
    expect(report.diff).toContain(`-cwd = "${SERVERS}"`);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(fs.existsSync(path.join(home(), 'servers.json'))).toBe(false);
  });

  it('imports the stdio entry, editing only its args and cwd lines (its command is this node already); a client then runs it through the warden with the forwarded variable; again changes nothing; unwrap restores every byte', async () => {
    const { code, report, stderr } = run(['import', file, '--yes']);
    expect(stderr).toBe('');
    expect(code).toBe(3);
    expect(results(report)).toEqual({ inline: 'refused', basic: 'imported', 'host-tools': 'refused', figma: 'remote' });
    const after = fs.readFileSync(file, 'utf8');
    const gone = original.split('\n').filter((l) => !after.split('\n').includes(l));
    expect(gone).toEqual(['args = [', `  "${SERVERS}/basic.mjs", # the server's script`, ']', `cwd = "${SERVERS}"`]);
    expect(after).toContain(`command = "${NODE}"   # the program Codex starts\n# Optional\nargs = ["${WARDEN}", "--home", "${home()}", "run", "basic"]\n`);
    const enrolled = JSON.parse(fs.readFileSync(path.join(home(), 'servers.json'), 'utf8')).servers;
    expect(Object.keys(enrolled)).toEqual(['basic']); // the inline entry was refused before anything was enrolled
    expect(report.entries.find((e) => e.name === 'inline')?.detail).toContain('write it as a table of its own, [mcp_servers.inline]');
    const server = enrolled.basic;
    expect(server).toMatchObject({ command: NODE, args: [`${SERVERS}/basic.mjs`], cwd: SERVERS, passEnv: ['API_TOKEN', 'CODEX_FIXTURE_FORWARDED'] });

    // Codex's part, done by the SDK client: the entry's command and args, its env, and the forwarded variable.
    const entry = (parseToml(after) as { mcp_servers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }).mcp_servers.basic;
    const transport = new StdioClientTransport({ command: entry?.command as string, args: entry?.args, env: { PATH: process.env.PATH ?? '', ...entry?.env, CODEX_FIXTURE_FORWARDED: 'forwarded-by-codex' }, stderr: 'pipe' });
    const client = new Client({ name: 'codex-stand-in', version: '1.0.0' });
    await client.connect(transport);
    try {
      const r = (await client.callTool({ name: 'env', arguments: { name: 'CODEX_FIXTURE_FORWARDED' } })) as { content: { text: string }[] };
      expect(JSON.parse(r.content[0]?.text ?? '{}').CODEX_FIXTURE_FORWARDED).toBe('forwarded-by-codex');
    } finally {
      await client.close();
    }

    const again = run(['import', file, '--yes']);
    expect(results(again.report)).toEqual({ inline: 'refused', basic: 'already', 'host-tools': 'refused', figma: 'remote' });
    expect(fs.readFileSync(file, 'utf8')).toBe(after);

    const unwrap = run(['unwrap', file]);
    expect(unwrap.code).toBe(0);
    expect(results(unwrap.report)).toEqual({ basic: 'restored' });
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });
});
