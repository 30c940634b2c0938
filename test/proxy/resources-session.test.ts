import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BASE_TOOLS, MARKER, configure, opened, request, shapeshifter, type Shifter } from '../helpers/surface.js';
import { auditEvents, cli } from '../helpers/warden.js';

// Resources and resource templates are digested in warden.lock like prompts (docs/threat-model.md, "A surface
// the lock never saw"): in enforce, a session refuses resources/read of a resource that changed or appeared
// since the lock; a changed template is reported (verify, the audit log, stderr) and reads through it (URIs it
// expands to, RFC 6570) are refused.

let sh: Shifter;
afterEach(() => sh?.cleanup());

const NOTES = { uri: 'file:///project/notes.txt', name: 'notes', description: 'Project notes.', mimeType: 'text/plain' };
const README = { uri: 'file:///project/README.md', name: 'readme', description: 'The README.', mimeType: 'text/markdown' };
const TICKET = { uriTemplate: 'tickets://{id}', name: 'ticket', description: 'A ticket by id.', mimeType: 'application/json' };

type Locked = { servers: { shifty: { catalogs: Record<string, Record<string, string>> } } };
const lockedCatalogs = (home: string): Record<string, Record<string, string>> => (JSON.parse(fs.readFileSync(path.join(home, 'warden.lock'), 'utf8')) as Locked).servers.shifty.catalogs;

/** The warden's refusal of a read, exactly: its own code, the item, the reason and the command that shows more. */
function expectReadRefused(answer: Record<string, unknown>, uri: string): void {
  expect(answer.result).toBeUndefined();
  expect(answer.error).toEqual({
    code: -32001,
    message: `mcp-warden refused resources/read of resource "${uri}" of server 'shifty': changed or added since the lock (enforce). Run 'mcp-warden diff shifty' to see why.`,
  });
}

describe('resources/read on a session in enforce', () => {
  it('refuses to read a resource that changed or was added since the lock, and reads the unchanged one', async () => {
    sh = shapeshifter({ toolsRaw: BASE_TOOLS, resources: [NOTES, README] });
    expect(Object.keys(lockedCatalogs(sh.home).resources ?? {}).sort()).toEqual([README.uri, NOTES.uri].sort());
    const added = { uri: 'file:///project/.env', name: 'env', description: 'Deployment secrets.' };
    sh.serve({ toolsRaw: BASE_TOOLS, resources: [{ ...NOTES, description: `Project notes. ${MARKER}` }, README, added] });

    const verify = cli(sh.home, ['verify', '--json']);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout)).toMatchObject({ servers: [{ status: 'drift', worst: 'catalog', catalogs: [{ kind: 'resources', id: NOTES.uri, state: 'changed' }, { kind: 'resources', id: added.uri, state: 'added' }] }] });

    const s = sh.session();
    expect((await opened(s)).result).toBeDefined();
    expectReadRefused(await request(s, 'resources/read', { uri: NOTES.uri }), NOTES.uri);
    expectReadRefused(await request(s, 'resources/read', { uri: added.uri }), added.uri);
    expect(await request(s, 'resources/read', { uri: README.uri })).toMatchObject({ result: { contents: [{ uri: README.uri, text: `contents of ${README.uri}` }] } });
    s.close();
    expect((await s.exited).code).toBe(0);

    expect(s.stderr).toContain(`resources "${NOTES.uri}" changed since the lock; reading it is refused on this session`);
    expect(s.stderr).toContain(`resources "${added.uri}" added since the lock; reading it is refused on this session`);
    const events = auditEvents(sh.home);
    expect(events.find((e) => e.event === 'catalog_drift')).toMatchObject({ server: 'shifty', changes: [{ kind: 'resources', id: NOTES.uri, state: 'changed' }, { kind: 'resources', id: added.uri, state: 'added' }] });
    expect(events.filter((e) => e.event === 'read_refused')).toMatchObject([{ kind: 'resource', id: NOTES.uri }, { kind: 'resource', id: added.uri }]);
    expect(fs.readFileSync(path.join(sh.home, 'audit.log'), 'utf8')).not.toContain(MARKER);
  });

  it('lets a monitor session read a changed resource, and says so', async () => {
    sh = shapeshifter({ toolsRaw: BASE_TOOLS, resources: [NOTES] });
    configure(sh.home, { posture: 'monitor' });
    sh.serve({ toolsRaw: BASE_TOOLS, resources: [{ ...NOTES, description: 'Notes, differently.' }] });
    const s = sh.session();
    await opened(s);
    expect(await request(s, 'resources/read', { uri: NOTES.uri })).toMatchObject({ result: { contents: [{ uri: NOTES.uri }] } });
    s.close();
    await s.exited;
    expect(s.stderr).toContain(`resources "${NOTES.uri}" changed since the lock; allowed (monitor)`);
    expect(auditEvents(sh.home).filter((e) => e.event === 'read_refused')).toEqual([]);
  });
});

describe('resource templates', () => {
  it('reports a changed template in verify, the audit log and on stderr, and refuses reads through it (enforce)', async () => {
    sh = shapeshifter({ toolsRaw: BASE_TOOLS, resourceTemplates: [TICKET] });
    expect(Object.keys(lockedCatalogs(sh.home).resourceTemplates ?? {})).toEqual([TICKET.uriTemplate]);
    expect(cli(sh.home, ['verify']).code).toBe(0);
    sh.serve({ toolsRaw: BASE_TOOLS, resourceTemplates: [{ ...TICKET, description: `A ticket by id. ${MARKER}` }] });

    const verify = cli(sh.home, ['verify', '--json']);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout)).toMatchObject({ servers: [{ status: 'drift', worst: 'catalog', catalogs: [{ kind: 'resourceTemplates', id: TICKET.uriTemplate, state: 'changed' }] }] });
    expect(verify.stdout).not.toContain(MARKER);

    const s = sh.session();
    expect((await opened(s)).result).toBeDefined();
    expectReadRefused(await request(s, 'resources/read', { uri: 'tickets://42' }), 'tickets://42');
    s.close();
    expect((await s.exited).code).toBe(0);
    expect(s.stderr).toContain(`resourceTemplates "${TICKET.uriTemplate}" changed since the lock; reading through it is refused on this session`);
    expect(auditEvents(sh.home).find((e) => e.event === 'catalog_drift')).toMatchObject({ server: 'shifty', changes: [{ kind: 'resourceTemplates', id: TICKET.uriTemplate, state: 'changed' }] });
    expect(fs.readFileSync(path.join(sh.home, 'audit.log'), 'utf8')).not.toContain(MARKER);
  });
});
