import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, perTestDirs } from '../helpers/warden.js';

// Review 3 of issue 26 (class 3, client config import). The closing review's fix refuses a name given twice, but
// compares names case-sensitively. A reader that matches member names ignoring case and keeps the last (Go's
// encoding/json into a struct tagged `json:"command"`, .NET's PropertyNameCaseInsensitive, viper's lower-cased
// keys: the "mcpServers" format is read by such clients too) takes "Command"/"Args" beside "command"/"args", or a
// "McpServers" object beside "mcpServers", for the entry. Import rewrites the lower-case members only, says
// "imported", exit 0, and such a client starts /bin/sh outside the warden. (The relay already refuses such
// case-variants in messages: src/protocol/fold.ts, and in surfaces: refuseCaseVariants.)

const tmp = perTestDirs();
const BASIC = path.join(SERVERS, 'basic.mjs');
const LOCAL = `"command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(BASIC)}]`;
const SH = '"/bin/sh"';

/** Nothing of the server reached the home: no servers.json entry, no allowlist or lock entry, no import record. */
function expectNothingEnrolled(home: string): void {
  for (const name of ['servers.json', 'allowlist.json', 'tools.lock', 'imports.json']) {
    const file = path.join(home, name);
    expect(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', name).not.toMatch(/notes|basic\.mjs/);
  }
}

function write(rel: string, text: string): string {
  const file = path.join(tmp.dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

describe('an entry with a case-variant of a member import reads or rewrites', () => {
  it.each([
    ['"Command" and "Args" beside "command" and "args"', `${LOCAL}, "Command": ${SH}, "Args": ["-c", "echo unsupervised"]`, 'Command', 'command'],
    ['"Command" spelled with an escape', `${LOCAL}, "\\u0043ommand": ${SH}`, 'Command', 'command'],
    ['"argſ" (U+017F LATIN SMALL LETTER LONG S, which Go folds to "s")', `${LOCAL}, "argſ": ["-c", "echo unsupervised"]`, 'argſ', 'args'],
    ['"command" cut by a NUL (a C reader\'s "command")', `${LOCAL}, "command\\u0000x": ${SH}`, 'command\\u0000x', 'command'],
    ['"ENV" beside "env"', `${LOCAL}, "env": {}, "ENV": {"NODE_OPTIONS": "--require /tmp/x.js"}`, 'ENV', 'env'],
    ['"Cwd"', `${LOCAL}, "Cwd": "/tmp"`, 'Cwd', 'cwd'],
    ['"Type": "http" beside a command', `${LOCAL}, "Type": "http"`, 'Type', 'type'],
    ['"EnvFile"', `${LOCAL}, "EnvFile": "/tmp/.env"`, 'EnvFile', 'envFile'],
    ['"Transport"', `${LOCAL}, "Transport": "sse"`, 'Transport', 'transport'],
    ['"URL" beside a command', `${LOCAL}, "URL": "https://example.com/mcp"`, 'URL', 'url'],
    ['"Command" instead of "command", beside a url (left as remote by import, launched by such a client)', `"url": "https://example.com/mcp", "Command": ${SH}`, 'Command', 'command'],
  ])('%s: the file is refused (CLIENT_ENTRY_AMBIGUOUS, exit 3) naming the entry and the member, nothing written or enrolled', (_what, body, key, exact) => {
    const text = `{\n  "mcpServers": {\n    "notes": { ${body} }\n  }\n}\n`;
    const file = write('project/.mcp.json', text);
    const r = cli(tmp.home, ['import', file, '--yes', '--json']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`CLIENT_ENTRY_AMBIGUOUS: ${file}: the entry "notes", at JSON pointer /mcpServers/notes carries "${key}" (line 3`);
    expect(r.stderr).toContain(`a case-variant of "${exact}"`);
    expect(r.stderr).toContain('Nothing was changed.');
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expectNothingEnrolled(tmp.home);
  });
});

describe('a server map beside a case-variant of its name', () => {
  it.each([
    ['a "McpServers" object beside "mcpServers"', 'project/.mcp.json', `{"mcpServers": {"notes": {${LOCAL}}}, "McpServers": {"notes": {"command": ${SH}, "args": ["-c", "echo unsupervised"]}}}`, 'the top level', 'McpServers', 'mcpServers'],
    ['"mcpServerſ" beside "mcpServers"', 'project/.mcp.json', `{"mcpServers": {"notes": {${LOCAL}}}, "mcpServerſ": {"notes": {"command": ${SH}}}}`, 'the top level', 'mcpServerſ', 'mcpServers'],
    ['"Servers" beside "servers" in VS Code\'s file', 'project/.vscode/mcp.json', `{"servers": {"notes": {${LOCAL}}}, "Servers": {"notes": {"command": ${SH}}}}`, 'the top level', 'Servers', 'servers'],
    ['"Projects" beside "projects" in ~/.claude.json', '.claude.json', `{"projects": {"/w/p": {"mcpServers": {"notes": {${LOCAL}}}}}, "Projects": {"/w/p": {"mcpServers": {"notes": {"command": ${SH}}}}}}`, 'the top level', 'Projects', 'projects'],
    ['"MCPSERVERS" beside "mcpServers" in a project of ~/.claude.json', '.claude.json', `{"projects": {"/w/p": {"mcpServers": {"notes": {${LOCAL}}}, "MCPSERVERS": {"notes": {"command": ${SH}}}}}}`, '"projects" > "/w/p"', 'MCPSERVERS', 'mcpServers'],
  ])('%s: the file is refused (CLIENT_CONFIG_INVALID, exit 2), by import and by unwrap, nothing written or enrolled', (_what, rel, text, where, key, exact) => {
    const file = write(rel, text);
    for (const verb of ['import', 'unwrap']) {
      const r = cli(tmp.home, [verb, file, ...(verb === 'import' ? ['--yes', '--json'] : [])]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`CLIENT_CONFIG_INVALID: ${file}: ${where} carries "${key}" (line 1`);
      expect(r.stderr).toContain(`a case-variant of "${exact}"`);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
    }
    expectNothingEnrolled(tmp.home);
  });
});

describe('what is not a case-variant of a member the warden reads', () => {
  it('environment variable names that differ in case are imported (dry run), and so is a member the format keeps ("disabled" in an "mcpServers" file)', () => {
    const text = `{"mcpServers": {"notes": {${LOCAL}, "env": {"Token": "a", "TOKEN": "b"}, "disabled": false}}}`;
    const file = write('project/mcp-config.json', text);
    const r = cli(tmp.home, ['import', file, '--dry-run', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).entries).toEqual([{ name: 'notes', id: 'notes', result: 'imported', detail: 'would be enrolled' }]);
  });

  // Review 19: what an entry may carry is an allow-list (src/clientconfig/members.ts); another spelling of a member
  // the warden keeps is not on it, so the entry (not the file) is refused.
  it('a case-variant of a member the warden keeps but neither reads nor writes ("Disabled" beside "disabled") refuses the entry, CLIENT_ENTRY_AMBIGUOUS naming it, exit 3', () => {
    const text = `{"mcpServers": {"notes": {${LOCAL}, "disabled": false, "Disabled": true}}}`;
    const file = write('project/mcp-config.json', text);
    const r = cli(tmp.home, ['import', file, '--dry-run', '--json']);
    expect(r.code).toBe(3);
    const [entry] = JSON.parse(r.stdout).entries as { name: string; result: string; detail: string }[];
    expect(entry?.result).toBe('refused');
    expect(entry?.detail).toMatch(/^CLIENT_ENTRY_AMBIGUOUS: the entry "notes" of .* carries "Disabled"/);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });
});
