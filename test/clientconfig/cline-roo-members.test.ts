import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { wrapEntryText } from '../../src/clientconfig/rewrite.js';

// Cline's and Roo Code's files as their documentation writes them (test/fixtures/clients/README.md): the members
// those clients read that start no program and change no launch are kept, the local entries imported and, once
// rewritten, counted as the warden's launch; Cline's "transportType" only as "stdio" on a local entry (Cline
// launches an entry with a command whatever it says), a remote type on a remote one.

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = '/opt/mcp-warden/dist/cli/main.js';
const NODE = process.execPath;

function fixture(rel: string, as: string): ReturnType<typeof parseClientConfig> {
  const text = fs.readFileSync(path.join(ROOT, 'test/fixtures/clients', rel), 'utf8').replaceAll('@NODE@', NODE).replaceAll('@SERVERS@', '/srv/servers');
  return parseClientConfig(as, text);
}
const plans = (cfg: ReturnType<typeof parseClientConfig>): Record<string, ReturnType<typeof classify>> => Object.fromEntries(cfg.entries.map((e) => [e.name, classify(e, SCRIPT, NODE)]));

/** The file with every entry to import pointed at the warden (as import writes it), read again. */
function wrapped(cfg: ReturnType<typeof parseClientConfig>, as: string): ReturnType<typeof parseClientConfig> {
  let text = cfg.text;
  for (const e of cfg.entries) if (classify(e, SCRIPT, NODE).action === 'import') text = wrapEntryText(text, e.location, NODE, [SCRIPT, '--home', '/h', 'run', e.name]);
  return parseClientConfig(as, text);
}

describe("Cline's and Roo Code's documented members", () => {
  it("Cline: local entries with autoApprove, disabled, timeout and transportType \"stdio\" are imported, then counted as wrapped; remote ones are left", () => {
    const as = '/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json';
    const cfg = fixture('cline/cline_mcp_settings.json', as);
    expect(plans(cfg)).toMatchObject({ 'local-server': { action: 'import' }, 'legacy-stdio': { action: 'import' }, 'remote-server': { action: 'remote' }, streamable: { action: 'remote' } });
    const after = wrapped(cfg, as);
    expect(plans(after)).toMatchObject({ 'local-server': { action: 'wrapped', id: 'local-server' }, 'legacy-stdio': { action: 'wrapped', id: 'legacy-stdio' } });
    expect((after.entries[1]?.value as Record<string, unknown>).transportType).toBe('stdio');
  });

  it('Roo Code: local entries with alwaysAllow, cwd, timeout, watchPaths and disabledTools are imported, then counted as wrapped', () => {
    const as = '/p/.roo/mcp.json';
    const cfg = fixture('roo-code/.roo/mcp.json', as);
    expect(plans(cfg)).toMatchObject({ server1: { action: 'import' }, watched: { action: 'import', cwd: '/srv/servers' }, 'remote-server': { action: 'remote' } });
    const after = wrapped(cfg, as);
    expect(plans(after)).toMatchObject({ server1: { action: 'wrapped' }, watched: { action: 'wrapped', id: 'watched' } });
    expect((after.entries[1]?.value as Record<string, unknown>).watchPaths).toEqual(['/srv/servers/basic.mjs']);
  });

  const entry = (o: Record<string, unknown>, file = '/p/.roo/mcp.json'): ReturnType<typeof classify> => {
    const cfg = parseClientConfig(file, JSON.stringify({ mcpServers: { s: o } }));
    return classify(cfg.entries[0] as (typeof cfg.entries)[number], SCRIPT, NODE);
  };
  const LOCAL = { command: '/usr/bin/node', args: ['s.js'] };
  const WRAPPED = { command: NODE, args: [SCRIPT, 'run', 's'] };

  it('a transportType other than "stdio" on a local or wrapped entry refuses it, CLIENT_ENTRY_AMBIGUOUS, naming the value', () => {
    for (const base of [LOCAL, WRAPPED]) {
      expect(entry({ ...base, transportType: 'sse' })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('"transportType": "sse"') });
      expect(entry({ ...base, transportType: 'websocket' })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('"transportType" "websocket" on a local entry') });
      expect(entry({ ...base, transportType: 1 })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    }
  });

  it('transportType "stdio" beside a URL is both local and remote; a remote entry takes only a remote transportType', () => {
    expect(entry({ url: 'https://e.com/mcp', transportType: 'stdio' })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('"transportType": "stdio"') });
    expect(entry({ url: 'https://e.com/mcp', transportType: 'http' })).toMatchObject({ action: 'remote' });
    expect(entry({ url: 'https://e.com/mcp', transportType: 'carrier-pigeon' })).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('on a remote entry') });
  });

  it('transportType and watchPaths stay refused in the files of clients that do not document them', () => {
    for (const file of ['/home/u/.config/Claude/claude_desktop_config.json', '/p/.mcp.json', '/p/.cursor/mcp.json']) {
      expect(entry({ ...LOCAL, watchPaths: ['/x'] }, file)).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('carries "watchPaths"') });
      expect(entry({ ...LOCAL, transportType: 'stdio' }, file)).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('carries "transportType"') });
    }
  });
});
