import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BASE_TOOLS, MARKER, configure, opened, request, shapeshifter, type Shifter } from '../helpers/surface.js';
import { shapeshifterTemplate } from '../helpers/shifter-template.js';
import { auditEvents, cli } from '../helpers/warden.js';

let sh: Shifter;
/** shapeshifter({ toolsRaw: BASE_TOOLS }), its server added once for the file (helpers/shifter-template.ts). */
const baseShifter = shapeshifterTemplate({ toolsRaw: BASE_TOOLS });
afterEach(() => sh?.cleanup());

describe('lock, verify, diff and pin', () => {
  it('add locks the surface; verify exits 0 while it matches and 1 once it drifts', () => {
    sh = baseShifter();
    const lock = fs.readFileSync(path.join(sh.home, 'tools.lock'), 'utf8');
    expect(lock).toContain('"lockfile_version": 1');
    expect(lock).toContain('"name": "search"');
    expect(cli(sh.home, ['verify']).code).toBe(0);
    sh.serve({ toolsRaw: BASE_TOOLS.replace('Writes a file.', 'Writes any file.') });
    const r = cli(sh.home, ['verify', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ servers: [{ id: 'shifty', status: 'drift', worst: 'description', tools: [{ name: 'write', state: 'changed', classes: ['description'], fields: ['description'] }] }] });
  });

  it('diff names tools, classes and fields; pin accepts the served surface', () => {
    sh = baseShifter();
    sh.serve({ toolsRaw: BASE_TOOLS.replace('"readOnlyHint":false', '"readOnlyHint":true').replace('Writes a file.', `Writes. ${MARKER}`) });
    const d = cli(sh.home, ['diff', 'shifty']);
    expect(d.code).toBe(1);
    expect(d.stdout).toContain('shifty: DRIFT (most severe: widening)');
    expect(d.stdout).toMatch(/changed +search +\[widening, schema\] +fields: annotations +\(readOnlyHint gained\)/);
    expect(d.stdout).toMatch(/changed +write +\[description\] +fields: description/);
    expect(d.stdout).toContain('mcp-warden pin shifty');

    expect(cli(sh.home, ['pin', 'shifty', '--tool', 'write']).code).toBe(0);
    const after = JSON.parse(cli(sh.home, ['diff', 'shifty', '--json']).stdout) as { tools: { name: string }[] };
    expect(after.tools.map((t) => t.name)).toEqual(['search']);
    expect(cli(sh.home, ['pin', 'shifty']).code).toBe(0);
    expect(cli(sh.home, ['verify', 'shifty']).code).toBe(0);
    expect(fs.readFileSync(path.join(sh.home, 'audit.log'), 'utf8')).not.toContain(MARKER);
    expect(auditEvents(sh.home).filter((e) => e.event === 'surface' && e.source === 'pin')).toHaveLength(2);
  });

  it('digests prompts: a changed prompt is drift for verify, and a session in enforce refuses to get it', async () => {
    const prompts = [{ name: 'summarize', description: 'Summarize the text.', arguments: [{ name: 'text', required: true }] }];
    sh = shapeshifter({ toolsRaw: BASE_TOOLS, prompts });
    const lock = JSON.parse(fs.readFileSync(path.join(sh.home, 'warden.lock'), 'utf8')) as { servers: { shifty: { catalogs: { prompts: Record<string, string> } } } };
    expect(Object.keys(lock.servers.shifty.catalogs.prompts)).toEqual(['summarize']);
    expect(cli(sh.home, ['verify']).code).toBe(0);
    sh.serve({ toolsRaw: BASE_TOOLS, prompts: [{ ...prompts[0], description: `Summarize. ${MARKER}` }, { name: 'added', description: 'New.' }] });
    const r = cli(sh.home, ['verify', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ servers: [{ status: 'drift', worst: 'catalog', catalogs: [{ kind: 'prompts', id: 'summarize', state: 'changed' }, { kind: 'prompts', id: 'added', state: 'added' }] }] });
    const s = sh.session();
    expect((await opened(s)).result).toBeDefined();
    const got = await request(s, 'prompts/get', { name: 'summarize', arguments: { text: 'x' } });
    expect(got.error).toMatchObject({ code: -32001, message: expect.stringContaining('mcp-warden refused prompts/get of prompt "summarize"') });
    expect((await request(s, 'prompts/get', { name: 'added' })).error).toMatchObject({ code: -32001 });
    expect(JSON.stringify(got)).not.toContain(MARKER);
    s.close();
    await s.exited;
    expect(s.stderr).toContain('prompts "summarize" changed since the lock; getting it is refused on this session');
    expect(auditEvents(sh.home).find((e) => e.event === 'catalog_drift')).toMatchObject({ changes: [{ kind: 'prompts', id: 'summarize', state: 'changed' }, { kind: 'prompts', id: 'added', state: 'added' }] });
    expect(auditEvents(sh.home).filter((e) => e.event === 'read_refused')).toMatchObject([{ kind: 'prompt', id: 'summarize' }, { kind: 'prompt', id: 'added' }]);
    expect(fs.readFileSync(path.join(sh.home, 'audit.log'), 'utf8')).not.toContain(MARKER);
  });

  it('lets a monitor session get a changed prompt, and says so', async () => {
    const prompts = [{ name: 'summarize', description: 'Summarize the text.' }];
    sh = shapeshifter({ toolsRaw: BASE_TOOLS, prompts });
    configure(sh.home, { posture: 'monitor' });
    sh.serve({ toolsRaw: BASE_TOOLS, prompts: [{ name: 'summarize', description: 'Summarize, differently.' }] });
    const s = sh.session();
    await opened(s);
    expect((await request(s, 'prompts/get', { name: 'summarize' })).result).toMatchObject({ description: 'Summarize, differently.' });
    s.close();
    await s.exited;
    expect(s.stderr).toContain('prompts "summarize" changed since the lock; allowed (monitor)');
  });

  it('lock refuses to overwrite an entry, and pin refuses a missing one', () => {
    sh = baseShifter();
    const again = cli(sh.home, ['lock', 'shifty']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("To accept its current surface, review it with 'mcp-warden diff shifty', then run: mcp-warden pin shifty");
    fs.rmSync(path.join(sh.home, 'tools.lock'));
    const pin = cli(sh.home, ['pin', 'shifty']);
    expect(pin.code).toBe(4);
    expect(pin.stderr).toContain('Capture one with: mcp-warden lock shifty');
    expect(cli(sh.home, ['verify', 'shifty']).code).toBe(4);
  });

  it('verify exits 4 on a tools.lock edited by hand, and 5 on an inadmissible surface', () => {
    sh = baseShifter();
    const file = path.join(sh.home, 'tools.lock');
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace('Searches the web.', 'Searches the web!'));
    const edited = cli(sh.home, ['verify']);
    expect(edited.code).toBe(4);
    expect(edited.stderr).toMatch(/tools\.lock at .* is not a valid lockfile: \/servers\/shifty\/tools\/0\/h_tool/);
    fs.writeFileSync(file, text);
    sh.serve({ toolsRaw: BASE_TOOLS.replace('"name":"write"', '"name":"search"') });
    const dup = cli(sh.home, ['verify', '--json']);
    expect(dup.code).toBe(5);
    expect(JSON.parse(dup.stdout)).toMatchObject({ servers: [{ status: 'error', error: { code: 'SURFACE_INADMISSIBLE' } }] });
  });
});
