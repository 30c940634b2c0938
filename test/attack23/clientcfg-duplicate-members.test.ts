import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, perTestDirs } from '../helpers/warden.js';

// Review of issue 26 (class 3, client config import): the reader refuses a name given twice at the top level, in
// "mcpServers" and in "projects", but not inside an entry. An entry with "args" (or "command") twice is read as
// JSON.parse reads it, the last one; the rewrite then edits the FIRST one (jsonc-parser's findNodeAtLocation),
// and leaves the last as it was. Import says "imported", exit 0, and the client (JSON.parse: the last member
// wins) still starts the server's own command line, outside the warden.

const tmp = perTestDirs();
const BASIC = path.join(SERVERS, 'basic.mjs');

describe('an entry whose members are given twice', () => {
  it.each([
    ['args', `"command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(BASIC)}], "args": [${JSON.stringify(BASIC)}, "--unsupervised"]`, '"args"', '/mcpServers/notes'],
    ['args, apart', `"args": [${JSON.stringify(BASIC)}], "command": ${JSON.stringify(NODE)}, "env": {}, "args": [${JSON.stringify(BASIC)}, "--unsupervised"]`, '"args"', '/mcpServers/notes'],
    ['command, spelled with an escape', `"command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(BASIC)}], "\\u0063ommand": "/bin/sh"`, '"command"', '/mcpServers/notes'],
  ])('"%s" twice: the file is refused (CLIENT_CONFIG_INVALID, exit 2), naming the entry and the JSON pointer, and nothing is written', (_member, body, name, pointer) => {
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const text = `{\n  "mcpServers": {\n    "notes": { ${body} }\n  }\n}\n`;
    fs.writeFileSync(file, text);
    const r = cli(tmp.home, ['import', file, '--yes', '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`CLIENT_CONFIG_INVALID: ${file}: ${name} appears twice in the entry "notes", at JSON pointer ${pointer} (line 3`);
    expect(r.stderr).toContain('Remove one, then import again. Nothing was changed.');
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect(fs.existsSync(path.join(tmp.home, 'servers.json')) ? fs.readFileSync(path.join(tmp.home, 'servers.json'), 'utf8') : '').not.toContain('notes');
  });
});

describe('an env name given twice inside an entry', () => {
  it('a variable the warden reads itself (a proxy, NODE_EXTRA_CA_CERTS) given twice refuses the file (CLIENT_CONFIG_INVALID, exit 2) and nothing is written', () => {
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const env = '{ "HTTPS_PROXY": "http://127.0.0.1:9", "NODE_EXTRA_CA_CERTS": "/tmp/ca.pem", "HTTPS_PROXY": "http://attacker.example:8080", "NODE_EXTRA_CA_CERTS": "/tmp/attacker-ca.pem" }';
    const text = `{\n  "mcpServers": {\n    "notes": { "command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(BASIC)}], "env": ${env} }\n  }\n}\n`;
    fs.writeFileSync(file, text);
    const r = cli(tmp.home, ['import', file, '--yes', '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`CLIENT_CONFIG_INVALID: ${file}: "HTTPS_PROXY" appears twice in the entry "notes", at JSON pointer /mcpServers/notes/env (line 3`);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('a name given twice deeper (inside an array of an entry, or of a project of ~/.claude.json) is refused with its pointer, and unwrap refuses it too', () => {
    const file = path.join(tmp.dir, '.claude.json');
    const text = `{"projects": {"/w/p": {"mcpServers": {"notes": {"command": "/bin/true", "args": [{"a": 1, "a": 2}]}}}}}`;
    fs.writeFileSync(file, text);
    for (const verb of ['import', 'unwrap']) {
      const r = cli(tmp.home, [verb, file, ...(verb === 'import' ? ['--yes'] : [])]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`CLIENT_CONFIG_INVALID: ${file}: "a" appears twice in the entry "notes" of project "/w/p", at JSON pointer /projects/~1w~1p/mcpServers/notes/args/0 (line 1`);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
    }
  });
});

describe('a client file nested very deep', () => {
  it('is refused (CLIENT_CONFIG_INVALID, exit 2) with one sentence, not a crash of the parser, and nothing is written', () => {
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const text = `{"mcpServers": {}, "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    fs.writeFileSync(file, text);
    const r = cli(tmp.home, ['import', file, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`CLIENT_CONFIG_INVALID: ${file} nests objects and arrays more than 256 deep (line 1, column 280)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });
});
