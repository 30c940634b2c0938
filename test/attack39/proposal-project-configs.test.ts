import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { enrolledWriter } from '../helpers/writer-proposal.js';
import { NODE, SERVERS, cli } from '../helpers/warden.js';

// review 16: the sandbox proposal is meant as an allow-list (src/sandbox/propose.ts configFolderProblem): a folder
// that existed before the enrollment is not proposed when it is a dot-folder at the top of the home or under
// $XDG_CONFIG_HOME, and grant-policy.ts refuses the MCP clients' folders at the top of the home. A project's own
// folders that run commands are neither: its .git/hooks (git runs them at the next commit), and the project-level
// configurations of the MCP clients (Claude Code's .claude/settings.json hooks, .vscode/mcp.json,
// .cursor/mcp.json). A server that writes there during `add` is proposed a write grant over each, and
// `sandbox <id> --propose --yes` pins it: confined with it, the server plants a command that runs unconfined.

const RUN_PLACES = ['.git/hooks', '.claude', '.vscode', '.cursor'];
const project = (): string => path.join(writer.user, 'projects', 'app');

// A checkout, as on any machine: its git folder, and the clients' project folders.
const writer = enrolledWriter('warden-a39-', 'proj', RUN_PLACES.map((d) => path.join('projects', 'app', d)), () => [NODE, path.join(SERVERS, 'attack39/project-config-dropper.mjs')]);

describe("a server that writes a project's git hooks and MCP client folders during its enrollment", () => {
  it('is proposed no write grant over those folders', () => {
    expect(writer.added.code, writer.added.stderr + writer.added.stdout).toBe(0);
    expect(fs.existsSync(path.join(project(), '.git/hooks/pre-commit'))).toBe(false);
    const p = writer.proposal<{ write: string[]; writes: { path: string }[] }>();
    expect(p.writes.map((w) => w.path)).toEqual(expect.arrayContaining([path.join(project(), '.git/hooks/pre-commit')]));
    for (const d of RUN_PLACES) expect(p.write, d).not.toContain(path.join(project(), d));
  });
});

describe("write grants over a project's places of commands, given by hand (review 16, finding 3)", () => {
  const env = (): Record<string, string> => ({ ...(process.env as Record<string, string>), HOME: writer.user });
  const sandboxWrite = (): string[] => (JSON.parse(fs.readFileSync(path.join(writer.home, 'servers.json'), 'utf8')) as { servers: Record<string, { sandbox?: { write: string[] } }> }).servers.proj?.sandbox?.write ?? [];

  it.each(['.git/hooks', '.claude/commands', '.vscode'])('refuses <project>/%s (SANDBOX_INVALID), the sandbox unchanged', (rel) => {
    const grant = path.join(project(), rel);
    fs.mkdirSync(grant, { recursive: true });
    const r = cli(writer.home, ['sandbox', 'proj', '--network', 'none', '--allow-write', grant], { env: env() });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: .*where git or an MCP client finds commands/);
    expect(r.code).toBe(2);
    expect(sandboxWrite()).not.toContain(grant);
  });

  it('refuses ~/.codex, a client folder the list did not know (SANDBOX_INVALID)', () => {
    const grant = path.join(writer.user, '.codex');
    fs.mkdirSync(grant, { recursive: true });
    const r = cli(writer.home, ['sandbox', 'proj', '--network', 'none', '--allow-write', grant], { env: env() });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.code).toBe(2);
  });

  it('still allows a write grant over the checkout that holds .git (the main use of a filesystem server)', () => {
    const r = cli(writer.home, ['sandbox', 'proj', '--network', 'none', '--allow-write', project()], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(sandboxWrite()).toEqual([project()]);
  });
});
