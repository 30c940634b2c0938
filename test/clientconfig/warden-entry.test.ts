import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/clientconfig/classify.js';
import { parseClientConfig } from '../../src/clientconfig/read.js';
import { applySplices, valueAt, wrapEntryText } from '../../src/clientconfig/rewrite.js';
import { isWardenVariable } from '../../src/clientconfig/warden-env.js';

// The relations import relies on, with generated near-misses (issue 26, items 5, 14, 15): an entry is already
// wrapped only when it is exactly this warden's launch; a command beside a URL is never remote; the variables
// the warden reads itself never stay in a rewritten entry, and unwrap's splice gives the original bytes back.

const SCRIPT = '/opt/mcp-warden/dist/cli/main.js';
const NODE = process.execPath;

function plan(entry: Record<string, unknown>): ReturnType<typeof classify> {
  const cfg = parseClientConfig('/p/.mcp.json', JSON.stringify({ mcpServers: { s: entry } }));
  return classify(cfg.entries[0] as (typeof cfg.entries)[number], SCRIPT, NODE);
}

const HONEST: string[][] = [
  [NODE, SCRIPT, 'run', 'fs'],
  [NODE, SCRIPT, '--home', '/h', 'run', 'fs'],
  [NODE, SCRIPT, '--home=/h', 'run', 'fs'],
  [SCRIPT, 'run', 'fs'],
  [SCRIPT, '--home', '/h', 'run', 'fs'],
];
const entryOf = (words: string[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({ command: words[0], args: words.slice(1), ...extra });
const WARDEN_READS = ['MCP_WARDEN_HOME', 'XDG_CONFIG_HOME', 'HOME', 'TMPDIR', 'NODE_TLS_REJECT_UNAUTHORIZED', 'NODE_EXTRA_CA_CERTS', 'NODE_USE_ENV_PROXY', 'HTTPS_PROXY', 'https_proxy', 'HOSTALIASES', 'SSL_CERT_FILE', 'OPENSSL_ia32cap', 'UV_THREADPOOL_SIZE', 'NOTIFY_SOCKET'];
const LOADERS = ['NODE_OPTIONS', 'LD_PRELOAD', 'NODE_PATH', 'OPENSSL_CONF'];

describe("this warden's own launch, and nothing near it", () => {
  it('the honest forms are already wrapped, with their id and home', () => {
    for (const words of HONEST) expect(plan(entryOf(words)), words.join(' ')).toMatchObject({ action: 'wrapped', id: 'fs' });
    expect(plan(entryOf(HONEST[1] as string[], { env: { API_TOKEN: 'x' }, cwd: '/srv' }))).toEqual({ action: 'wrapped', id: 'fs', home: '/h' });
  });

  it("a path that reaches this node only for import's process, or through a link a project could re-point, is not this node", () => {
    expect(plan(entryOf(['/proc/self/exe', SCRIPT, 'run', 'fs']))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    expect(plan(entryOf([`/proc/${process.pid}/exe`, SCRIPT, 'run', 'fs']))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warden-entry-'));
    try {
      fs.symlinkSync(NODE, path.join(dir, 'node'));
      expect(plan(entryOf([path.join(dir, 'node'), SCRIPT, 'run', 'fs']))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(plan(entryOf([fs.realpathSync(NODE), SCRIPT, 'run', 'fs']))).toMatchObject({ action: 'wrapped', id: 'fs' });
  });

  it('one word more anywhere on the command line is never already wrapped', () => {
    fc.assert(
      fc.property(fc.constantFrom(...HONEST), fc.nat(), fc.string({ maxLength: 12 }), (words, at, word) => {
        fc.pre(!word.startsWith('--home=') && !(word === '--home' || word === 'run'));
        const longer = [...words.slice(0, at % (words.length + 1)), word, ...words.slice(at % (words.length + 1))];
        expect(plan(entryOf(longer)).action).not.toBe('wrapped');
      }),
      { numRuns: 300 },
    );
  });

  it('a word replaced by another is already wrapped only when it is the id (another server) or the home (another absolute one), and refused while the warden is still named', () => {
    fc.assert(
      fc.property(fc.constantFrom(...HONEST), fc.nat(), fc.string({ maxLength: 12 }), (words, at, word) => {
        const i = at % words.length;
        fc.pre(word !== words[i]);
        const changed = words.map((w, j) => (j === i ? word : w));
        const result = plan(entryOf(changed));
        if (result.action === 'wrapped') {
          expect(i === words.length - 1 || (words[i - 1] === '--home' && word.startsWith('/')) || (words[i]?.startsWith('--home=') && word.startsWith('--home=/'))).toBe(true);
          expect(/[$%]/.test(word) || (i < words.length - 1 && path.normalize(word.replace(/^--home=/, '')) !== word.replace(/^--home=/, ''))).toBe(false);
        } else if (changed.includes(SCRIPT)) {
          expect(result).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' }); // still names the warden
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a word a client may expand ($, %) or a home not in its normal form (., .., // parts) is never already wrapped (review 21)", () => {
    const refused = { action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' };
    for (const home of ['/${workspaceFolder}/${userHome}/../../h', '${userHome}/h', '/${env:HOME}/h', '/$HOME/h', '/%USERPROFILE%/h', '/a/../h', '/./h', '//h', '/a//h', '/h/.']) {
      expect(plan(entryOf([NODE, SCRIPT, '--home', home, 'run', 'fs'])), home).toMatchObject(refused);
      expect(plan(entryOf([NODE, SCRIPT, `--home=${home}`, 'run', 'fs'])), home).toMatchObject(refused);
    }
    expect(plan(entryOf([NODE, SCRIPT, '--home', '/h/${x}', 'run', 'fs']))).toMatchObject({ ...refused, reason: expect.stringMatching(/holds "\/h\/\$\{x\}", with "\$" or "%", which a client may expand/) });
    expect(plan(entryOf([`/\${userHome}/../${NODE}`, SCRIPT, 'run', 'fs']))).toMatchObject(refused);
    expect(plan(entryOf([NODE, `/%APPDATA%/..${SCRIPT}`, 'run', 'fs']))).toMatchObject(refused);
  });

  it('a variable the warden reads itself, a loader variable, or an envFile in the entry is never already wrapped', () => {
    fc.assert(
      fc.property(fc.constantFrom(...HONEST), fc.constantFrom(...WARDEN_READS, ...LOADERS), fc.string({ maxLength: 8 }), (words, name, value) => {
        expect(plan(entryOf(words, { env: { API_TOKEN: 't', [name]: value } }))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
      }),
    );
    expect(plan(entryOf(HONEST[0] as string[], { envFile: '/p/.env' }))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
    expect(plan(entryOf(HONEST[3] as string[], { env: { PATH: '/p/bin' } }))).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' }); // the bin's env node
  });
});

describe('local or remote', () => {
  it('an entry with a command or type stdio is never remote, whatever URL key or type it carries beside', () => {
    fc.assert(
      fc.property(
        fc.record({ command: fc.option(fc.constantFrom('/usr/bin/node', ''), { nil: undefined }), type: fc.option(fc.constantFrom('stdio', 'http', 'sse', 'ws', 'streamable-http'), { nil: undefined }) }),
        fc.constantFrom('url', 'serverUrl', 'httpUrl', undefined),
        fc.jsonValue(),
        (base, urlKey, urlValue) => {
          fc.pre(base.command !== undefined || base.type === 'stdio');
          const entry: Record<string, unknown> = { ...Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined)), ...(urlKey ? { [urlKey]: urlValue } : {}) };
          const result = plan(entry);
          expect(result.action).not.toBe('remote');
          if (urlKey || (base.type !== undefined && base.type !== 'stdio')) expect(result).toMatchObject({ action: 'refused', code: 'CLIENT_ENTRY_AMBIGUOUS' });
        },
      ),
    );
  });
});

describe("the warden's variables leave the rewritten entry", () => {
  it('every name goes to exactly one side, the rewritten env holds none the warden reads, and the splice of the original restores the bytes', () => {
    const name = fc.oneof(fc.constantFrom(...WARDEN_READS, 'API_TOKEN', 'GREETING', 'PATH', 'LANG'), fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,10}$/));
    fc.assert(
      fc.property(fc.dictionary(name, fc.string({ maxLength: 10 }).filter((v) => !v.includes('${')), { maxKeys: 6 }), (env) => {
        fc.pre(Object.keys(env).every((k) => !LOADERS.includes(k) && !k.startsWith('LD_') && !k.startsWith('DYLD_')));
        const text = JSON.stringify({ mcpServers: { s: { command: '/usr/bin/node', args: ['/srv/server.js'], env } } }, null, 2);
        const cfg = parseClientConfig('/p/.mcp.json', text);
        const entry = cfg.entries[0] as (typeof cfg.entries)[number];
        const result = classify(entry, SCRIPT, NODE);
        if (result.action !== 'import') return void expect(result.action).toBe('refused'); // a loader variable the filter missed
        expect(Object.keys({ ...result.env, ...result.wardenEnv }).sort()).toEqual(Object.keys(env).sort());
        expect(Object.keys(result.env).some(isWardenVariable)).toBe(false);
        expect(Object.keys(result.wardenEnv).every(isWardenVariable)).toBe(true);
        const out = wrapEntryText(text, entry.location, NODE, [SCRIPT, '--home', '/h', 'run', 's'], Object.keys(result.wardenEnv));
        expect(valueAt(out, [...entry.location, 'env'])).toEqual(result.env);
        const after = parseClientConfig('/p/.mcp.json', out).entries[0] as (typeof cfg.entries)[number];
        expect(applySplices(out, [{ offset: after.offset, length: after.length, text: entry.text }])).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});
