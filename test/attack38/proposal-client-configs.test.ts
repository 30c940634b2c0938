import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli } from '../helpers/warden.js';
import { enrolledWriter } from '../helpers/writer-proposal.js';

// Review 15, finding 1: the sandbox proposal (src/sandbox/propose.ts) grants the folder above each write the
// enrollment launch made unless grant-policy.ts lists it, and the list knows the user's login and session folders
// but not the MCP clients' configurations. A server that writes Claude Desktop's config, Cursor's mcp.json and
// Claude Code's settings during `add` was proposed write grants over ~/.config/Claude, ~/.cursor and ~/.claude;
// confined with them, it adds to the client an entry (or a hook) the client runs at its next start: outside the
// sandbox and outside the warden. The same grants given by hand passed the policy too.

const CLIENT_DIRS = ['.config/Claude', '.cursor', '.claude'];

// The folders are there, as on any machine where those clients were set up.
const writer = enrolledWriter('warden-a38-', 'cfg', CLIENT_DIRS, () => [NODE, path.join(SERVERS, 'attack38/client-config-dropper.mjs')]);

describe("a server that writes the MCP clients' configurations during its enrollment", () => {
  it('is proposed no write grant over the folders of those configurations', () => {
    expect(writer.added.code, writer.added.stderr + writer.added.stdout).toBe(0);
    // The observation kept the writes off the real home.
    expect(fs.existsSync(path.join(writer.user, '.cursor/mcp.json'))).toBe(false);
    const p = writer.proposal<{ write: string[]; writes: { path: string }[] }>();
    expect(p.writes.map((w) => w.path)).toEqual(expect.arrayContaining([path.join(writer.user, '.cursor/mcp.json')]));
    for (const d of CLIENT_DIRS) expect(p.write, d).not.toContain(path.join(writer.user, d));
  });

  it.each(CLIENT_DIRS)('refuses ~/%s as a write grant given by hand (SANDBOX_INVALID), the sandbox unchanged', (rel) => {
    const grant = path.join(writer.user, rel);
    const r = cli(writer.home, ['sandbox', 'cfg', '--network', 'none', '--allow-write', grant], { env: writer.env });
    expect(r.stderr).toMatch(/SANDBOX_INVALID: /);
    expect(r.code).toBe(2);
    const servers = JSON.parse(fs.readFileSync(path.join(writer.home, 'servers.json'), 'utf8')) as { servers: Record<string, { sandbox?: { write: string[] } }> };
    expect(servers.servers.cfg?.sandbox?.write ?? []).not.toContain(grant);
  });
});
