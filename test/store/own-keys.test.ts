import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { opened, request, shapeshifter, toolNames, type Shifter } from '../helpers/surface.js';
import { NODE, SERVERS, addServer, auditEvents, cli, tempDir } from '../helpers/warden.js';

// Ids and names are looked up as own keys only: an id that is also the name of an Object.prototype member
// (`constructor`, `toString`, `hasOwnProperty`) is an ordinary id, and `__proto__` is refused with a message.

let home: string;
let sh: Shifter | undefined;
beforeEach(() => (home = tempDir()));
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
  sh?.cleanup();
  sh = undefined;
});

const BASIC = [NODE, path.join(SERVERS, 'basic.mjs')];

describe('server ids named like Object.prototype members', () => {
  it('adds, shows and keeps a server named constructor (and prototype) across later writes', () => {
    addServer(home, 'constructor', BASIC);
    addServer(home, 'prototype', BASIC);
    addServer(home, 'toString', BASIC);
    const status = cli(home, ['status', 'constructor', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ servers: [{ id: 'constructor', lock: { tools: 2 } }] });
    const all = JSON.parse(cli(home, ['status', '--json']).stdout) as { servers: { id: string }[] };
    expect(all.servers.map((s) => s.id).sort()).toEqual(['constructor', 'prototype', 'toString']);
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers).sort()).toEqual(['constructor', 'prototype', 'toString']);
    expect(cli(home, ['verify', 'constructor']).code).toBe(0);
    // The sandbox and rules edits validate the new value inside the shape of servers.json: a record that drops
    // `constructor` read it as no sandbox and no rules ("unchanged", exit 0), and the confinement asked for was
    // silently not applied (found while fixing review 14 finding 4).
    const sandbox = cli(home, ['sandbox', 'constructor', '--network', 'none', '--yes']);
    expect(sandbox.code, sandbox.stderr).toBe(0);
    const rules = cli(home, ['rules', 'constructor', '--kind', 'echo=read']);
    expect(rules.code, rules.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'servers.json'), 'utf8')).servers.constructor).toMatchObject({ sandbox: { network: 'none' }, rules: { tools: { echo: { kind: 'read' } } } });
  });

  it('answers an id that is only inherited (hasOwnProperty) as unknown, not as a crash', () => {
    addServer(home, 'a', BASIC);
    const r = cli(home, ['status', 'hasOwnProperty']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no server 'hasOwnProperty'");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses __proto__ at add with a clear message and writes nothing', () => {
    const r = cli(home, ['add', '__proto__', '--yes', '--', ...BASIC]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/'__proto__' is not a valid server id/);
    expect(fs.existsSync(path.join(home, 'servers.json'))).toBe(false);
  });
});

describe('tool and prompt names named like Object.prototype members', () => {
  it('locks and matches tools named constructor, toString and __proto__', async () => {
    const tools = JSON.stringify(['constructor', 'toString', '__proto__', 'plain'].map((name) => ({ name, description: `tool ${name}`, inputSchema: { type: 'object' } })));
    sh = shapeshifter({ toolsRaw: tools });
    const s = sh.session();
    await opened(s);
    expect(toolNames(await request(s, 'tools/list')).sort()).toEqual(['__proto__', 'constructor', 'plain', 'toString']);
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(auditEvents(sh.home).filter((e) => e.event === 'surface' && e.source === 'handshake').pop()).toMatchObject({ pinState: 'matched', changed: [] });
    // A changed description of `constructor` is drift like any other.
    sh.serve({ toolsRaw: tools.replace('tool constructor', 'tool constructor, changed') });
    const r = cli(sh.home, ['verify', 'shifty', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('"constructor"');
  });

  it('digests a tool field named __proto__ like any other field', () => {
    const tools = '[{"name":"t","description":"d","inputSchema":{"type":"object"},"__proto__":{"note":"one"}}]';
    sh = shapeshifter({ toolsRaw: tools });
    expect(cli(sh.home, ['verify', 'shifty']).code).toBe(0);
    sh.serve({ toolsRaw: tools.replace('"one"', '"two"') });
    const r = cli(sh.home, ['verify', 'shifty', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain('__proto__');
  });

  it('reports a prompt named constructor that appeared since the lock', async () => {
    const prompts = [{ name: 'greet', description: 'Greets.' }];
    sh = shapeshifter({ toolsRaw: '[]', prompts });
    sh.serve({ toolsRaw: '[]', prompts: [...prompts, { name: 'constructor', description: 'New.' }, { name: '__proto__', description: 'New too.' }] });
    const s = sh.session();
    await opened(s);
    s.close();
    await s.exited;
    const drift = auditEvents(sh.home).find((e) => e.event === 'catalog_drift') as { changes: { id: string; state: string }[] } | undefined;
    expect(drift?.changes).toEqual(expect.arrayContaining([{ kind: 'prompts', id: 'constructor', state: 'added' }, { kind: 'prompts', id: '__proto__', state: 'added' }]));
  });
});
