import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WardenError } from '../../src/error.js';
import { ENTRY_MEMBERS, parseClientConfig } from '../../src/clientconfig/read.js';

// The reader refuses another spelling of every member the warden reads or rewrites in an entry. The list is
// written once (read.ts): this keeps it whole against what classify.ts, warden-entry.ts and rewrite.ts read.

const SRC = path.resolve(import.meta.dirname, '../../src/clientconfig');

function refusal(text: string, file = '/p/.mcp.json'): { code: string; message: string } | undefined {
  try {
    parseClientConfig(file, text);
    return undefined;
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return { code: err.code, message: err.message };
  }
}

describe('the members an entry is refused for another spelling of', () => {
  it('hold every member classify.ts and warden-entry.ts read from an entry, and every one rewrite.ts edits', () => {
    const read = new Set<string>();
    for (const name of ['classify.ts', 'warden-entry.ts']) {
      const src = fs.readFileSync(path.join(SRC, name), 'utf8');
      for (const m of src.matchAll(/\bo\.(\w+)|\bo\['(\w+)'\]|hasOwn\(o, '(\w+)'\)/g)) read.add((m[1] ?? m[2] ?? m[3]) as string);
      for (const m of src.matchAll(/URL_KEYS = \[([^\]]*)\]/g)) for (const k of (m[1] as string).matchAll(/'(\w+)'/g)) read.add(k[1] as string);
    }
    for (const m of fs.readFileSync(path.join(SRC, 'rewrite.ts'), 'utf8').matchAll(/\[\.\.\.location, '(\w+)'/g)) read.add(m[1] as string);
    expect(read.size).toBeGreaterThanOrEqual(9); // the scan sees what it judges: command, args, env, cwd, type, envFile, url, serverUrl, httpUrl
    expect([...read].filter((k) => !ENTRY_MEMBERS.includes(k))).toEqual([]);
  });

  it.each(ENTRY_MEMBERS)('"%s" in upper case, and with a Unicode look-alike where one folds to it, refuses the entry', (member) => {
    const upper = member.toUpperCase();
    const r = refusal(JSON.stringify({ mcpServers: { s: { command: '/bin/true', [upper]: 1 } } }));
    expect(r?.code).toBe('CLIENT_ENTRY_AMBIGUOUS');
    expect(r?.message).toContain(`the entry "s", at JSON pointer /mcpServers/s carries "${upper}"`);
    expect(r?.message).toContain(`a case-variant of "${member}"`);
    if (member.includes('s')) {
      const longS = member.replace('s', '\u017f');
      expect(refusal(JSON.stringify({ mcpServers: { s: { command: '/bin/true', [longS]: 1 } } }))?.code).toBe('CLIENT_ENTRY_AMBIGUOUS');
    }
  });

  it.each(ENTRY_MEMBERS.filter((m) => m !== m.toLowerCase()))('"%s" in lower case refuses the entry (a fold of its own is no exact spelling)', (member) => {
    const lower = member.toLowerCase();
    const r = refusal(JSON.stringify({ mcpServers: { s: { command: '/bin/true', [member]: 1, [lower]: 2 } } }));
    expect(r?.code).toBe('CLIENT_ENTRY_AMBIGUOUS');
    expect(r?.message).toContain(`carries "${lower}"`);
    expect(r?.message).toContain(`a case-variant of "${member}"`);
  });

  it('"mcpservers" beside "mcpServers" refuses the file, at the top level and in a project of ~/.claude.json', () => {
    expect(refusal('{"mcpServers":{},"mcpservers":{"s":{"command":"/bin/sh"}}}')).toMatchObject({ code: 'CLIENT_CONFIG_INVALID', message: expect.stringContaining('carries "mcpservers"') });
    expect(refusal('{"projects":{"/w":{"mcpServers":{},"mcpservers":{"s":{"command":"/bin/sh"}}}}}', '/h/.claude.json')).toMatchObject({ code: 'CLIENT_CONFIG_INVALID', message: expect.stringContaining('carries "mcpservers"') });
  });

  it('no member has a "k", so the Kelvin sign (U+212A, which lower-cases to "k") makes no variant of one', () => {
    expect(ENTRY_MEMBERS.filter((m) => /k/i.test(m))).toEqual([]);
    expect(refusal(JSON.stringify({ mcpServers: { s: { command: '/bin/true', '\u212aey': 1 } } }))).toBeUndefined();
  });

  it('a case-variant deeper than the entry\'s own members (inside env, or an object in args) is not one of them', () => {
    expect(refusal(JSON.stringify({ mcpServers: { s: { command: '/bin/true', args: [{ Command: 1 }], env: { COMMAND: 'x', Env: 'y' } } } }))).toBeUndefined();
  });

  it('the exact names themselves, in every format, are read as before', () => {
    expect(refusal(JSON.stringify({ servers: { s: { type: 'stdio', command: '/bin/true', args: [], env: {}, envFile: '/e', cwd: '/' } } }), '/p/.vscode/mcp.json')).toBeUndefined();
    expect(refusal(JSON.stringify({ mcpServers: {}, projects: { '/w': { mcpServers: { s: { command: '/bin/true' } } } } }), '/h/.claude.json')).toBeUndefined();
  });

  it('the name of a member is escaped in the refusal', () => {
    const nul = refusal(JSON.stringify({ mcpServers: { s: { command: '/bin/true', 'command\u0000\u001b[2J': 1 } } }));
    expect(nul?.code).toBe('CLIENT_ENTRY_AMBIGUOUS');
    expect(nul?.message).toContain('carries "command\\u0000\\u001b[2J"');
    expect(nul?.message).not.toMatch(/[\u0000\u001b]/);
  });
});
