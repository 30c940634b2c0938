import { describe, expect, it } from 'vitest';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { WardenError } from '../../src/error.js';

// A member named "__proto__" (a new user's trial, 2026-12-08). JSON.parse, which the clients use, makes it an
// own property; a client that then copies the entry's env into the environment it starts the warden with by
// assignment (Object.assign, a loop of `env[k] = v`, a deep merge) sets the prototype of that environment
// instead, and node's spawn passes the prototype's members too (child_process: "Prototype values are
// intentionally included"): {"env": {"__proto__": {"NODE_OPTIONS": "--require /tmp/x.js"}}} in an entry the
// warden counted as its own launch would run the project's code inside the warden. Every road is refused, in
// every entry kind, at any depth: env, args, nested objects, and a server named "__proto__".

const SCRIPT = '/opt/mcp-warden/dist/cli/main.js';
const NODE = process.execPath;
const WRAPPED = { command: NODE, args: [SCRIPT, '--home', '/h', 'run', 'fs'] };
const LOCAL = { command: '/usr/bin/node', args: ['server.js'] };
const REMOTE = { type: 'http', url: 'https://example.com/mcp' };

/** The entries of a Claude Code .mcp.json written as `text` (raw: JSON.stringify would drop an own "__proto__"
 *  key of a literal, which is the prototype). */
function plans(text: string): ReturnType<typeof classify>[] {
  const cfg = parseClientConfig('/p/.mcp.json', text);
  return cfg.entries.map((e) => classify(e, SCRIPT, NODE));
}
const entry = (base: object, member: string): string => `{"mcpServers":{"s":${JSON.stringify(base).slice(0, -1)},${member}}}}`;
const refused = { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringMatching(/^the entry "s" of \/p\/\.mcp\.json holds a member named "__proto__" at JSON pointer \/.*__proto__/) };

describe('a member named "__proto__" in a client entry', () => {
  it("refuses an already-wrapped entry whose env carries it (an object or a string), whatever it holds", () => {
    expect(plans(entry(WRAPPED, '"env":{"__proto__":{"NODE_OPTIONS":"--require /tmp/x.js"}}'))).toEqual([refused]);
    expect(plans(entry(WRAPPED, '"env":{"API_TOKEN":"t","__proto__":"x"}'))).toEqual([refused]);
    expect(plans(entry(WRAPPED, '"env":{"\\u005f_proto__":{"MCP_WARDEN_HOME":"/evil"}}'))).toEqual([refused]);
  });

  it('refuses it in an entry to import, and in a remote one, in env, in a nested object and at the top of the entry', () => {
    expect(plans(entry(LOCAL, '"env":{"__proto__":"x"}'))).toEqual([refused]);
    expect(plans(entry(LOCAL, '"env":{"A":"1"},"__proto__":{"command":"/bin/sh"}'))).toEqual([refused]);
    expect(plans(entry(REMOTE, '"headers":{"__proto__":{"Authorization":"x"}}'))).toEqual([refused]);
    expect(plans(entry(REMOTE, '"oauth":{"scopes":[{"__proto__":{}}]}'))).toEqual([refused]);
  });

  it('refuses an args list that is an object holding it (the wrapped entry, the one to import)', () => {
    expect(plans(entry({ command: NODE }, `"args":{"__proto__":${JSON.stringify(WRAPPED.args)}}`))).toEqual([refused]);
    expect(plans(entry({ command: '/usr/bin/node' }, '"args":{"__proto__":["server.js"]}'))).toEqual([refused]);
  });

  it('refuses a server named "__proto__" and imports the other entries of the file', () => {
    const out = plans(`{"mcpServers":{"__proto__":${JSON.stringify(WRAPPED)},"ok":${JSON.stringify(LOCAL)}}}`);
    expect(out[0]).toEqual({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS', reason: expect.stringContaining('the server is named "__proto__"') });
    expect(out[1]).toMatchObject({ action: 'import', command: '/usr/bin/node' });
  });

  it('refuses the whole file when it is outside every entry (the top level, a project of ~/.claude.json)', () => {
    for (const [file, text] of [
      ['/p/.mcp.json', '{"__proto__":{"mcpServers":{}},"mcpServers":{}}'],
      ['/home/u/.claude.json', '{"projects":{"/p":{"__proto__":{"mcpServers":{"x":{"command":"/bin/sh"}}}}},"mcpServers":{}}'],
    ] as const) {
      let err: unknown;
      try {
        parseClientConfig(file, text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(WardenError);
      expect((err as WardenError).code).toBe('CLIENT_CONFIG_INVALID');
      expect((err as WardenError).message).toContain('"__proto__"');
    }
  });
});
