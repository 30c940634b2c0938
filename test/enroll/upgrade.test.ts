import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SERVER, type PublishOptions } from '../helpers/provenance-registry.js';
import { sanOf } from '../helpers/sigstore-pki.js';
import { treeSnapshot } from '../helpers/tree-snapshot.js';
import { auditEvents, cli, connectClient, NODE, type CliResult } from '../helpers/warden.js';
import { member, readHomeJson, readJson, type InstallJson } from '../helpers/json-docs.js';
import { GENUINE_11, ID, MOVED_11, PINNED, TRUST_FILES, V10, V11, allowlisted, entryDir, genuineHome, inside, pkgDir, reg, serverEntry, storeEntries, trustState, upgrade, upgradeRegistry } from './upgrade-fixture.js';

// `mcp-warden upgrade` and `mcp-warden outdated` end to end through one home's life (the registry stand-in, the
// releases and the forms 1.1.0 is published in: upgrade-fixture.ts): outdated and the refusals while it runs the
// genuine 1.0.0, then the accepted upgrade to the same publisher's 1.1.0. Overrides and homes of their own:
// upgrade-other-homes.test.ts.

upgradeRegistry();

describe('demo-server 1.0.0 installed, its 1.1.0 published in one form after another', () => {
  // One home through its life: outdated and the refusals while it runs 1.0.0, then the accepted upgrade.
  let home: string;
  beforeAll(() => {
    home = genuineHome();
  });

  describe('outdated', () => {
    const row = (form: PublishOptions | 'unpublished') => {
      if (form === 'unpublished') reg.unpublish(DEMO_SERVER, '1.1.0');
      else reg.publish(DEMO_SERVER, '1.1.0', form);
      const text = cli(home, ['outdated'], { env: reg.env });
      const json = cli(home, ['outdated', '--json'], { env: reg.env });
      expect([text.code, json.code], text.stderr + json.stderr).toEqual([0, 0]);
      const rows = (JSON.parse(json.stdout) as { servers: Record<string, unknown>[] }).servers;
      expect(rows).toHaveLength(1);
      return { text: text.stdout, row: rows[0] };
    };

    it('nothing newer than the pinned version: current', () => {
      const { text, row: r } = row('unpublished');
      expect(text).toMatch(new RegExp(`^${ID} +${DEMO_SERVER} +1\\.0\\.0 +1\\.0\\.0 +up to date$`, 'm'));
      expect(r).toEqual({ id: ID, package: DEMO_SERVER, version: '1.0.0', newest: '1.0.0', state: 'current', pinned: PINNED });
    });

    it('a newer version built by the pinned publisher: same-publisher, with who built it', () => {
      const { text, row: r } = row({}); // genuine
      expect(text).toMatch(new RegExp(`^${ID} +${DEMO_SERVER} +1\\.0\\.0 +1\\.1\\.0 +newer, provenance from the pinned publisher$`, 'm'));
      expect(r).toMatchObject({ newest: '1.1.0', state: 'same-publisher', pinned: PINNED, presented: { ...PINNED, san: sanOf(GENUINE_11), ref: 'refs/tags/v1.1.0', commit: GENUINE_11.commit } });
    });

    it('a newer version built by another repository: publisher-changed, naming both', () => {
      const { text, row: r } = row({ identity: MOVED_11 });
      expect(text).toContain('newer, BUILT BY ANOTHER PUBLISHER (upgrade refuses it)');
      expect(text).toContain(`${ID}: newest built by ${MOVED_11.repository} ${MOVED_11.workflow}; pinned ${PINNED.repository} ${PINNED.workflow}\n`);
      expect(r).toMatchObject({ newest: '1.1.0', state: 'publisher-changed', pinned: PINNED, presented: { repository: MOVED_11.repository } });
    });

    it('a newer version without attestations: no-provenance', () => {
      const { text, row: r } = row({ attestations: 'none' });
      expect(text).toContain('newer, NO PROVENANCE');
      expect(r).toEqual({ id: ID, package: DEMO_SERVER, version: '1.0.0', newest: '1.1.0', state: 'no-provenance', pinned: PINNED });
    });

    it('a newer version whose provenance does not verify: invalid, with the reason', () => {
      const { text, row: r } = row({ attestations: 'tampered' });
      expect(text).toContain('newer, PROVENANCE DOES NOT VERIFY');
      expect(text).toContain(`${ID}: PROVENANCE_INVALID: `);
      expect(r).toMatchObject({ newest: '1.1.0', state: 'invalid', problem: { code: 'PROVENANCE_INVALID' } });
    });
  });

  describe('upgrade refuses with exit 3, leaving servers.json, the allowlist, both locks and the store byte-identical', () => {
    const refused = (form: PublishOptions, args: string[] = []) => {
      reg.publish(DEMO_SERVER, '1.1.0', form);
      const before = trustState(home);
      const r = upgrade(home, ['--yes', ...args]);
      expect(trustState(home), 'nothing may change on a refusal').toEqual(before);
      expect(storeEntries(home)).toEqual([V10.entry]);
      return r;
    };

    it('1.1.0 built by another repository than the pinned one: PUBLISHER_CHANGED, naming both and the override', () => {
      const r = refused({ identity: MOVED_11 });
      expect([r.code, r.refusal], r.stderr).toEqual([3, 'PUBLISHER_CHANGED']);
      expect(r.stderr).toContain(MOVED_11.repository);
      expect(r.stderr).toContain(PINNED.repository);
      expect(r.stderr).toContain('--allow-publisher-change');
    });

    it('1.1.0 without provenance where 1.0.0 had it: PROVENANCE_MISSING, a trust downgrade', () => {
      const r = refused({ attestations: 'none' });
      expect([r.code, r.refusal], r.stderr).toEqual([3, 'PROVENANCE_MISSING']);
      expect(r.stderr).toContain('a trust downgrade');
      expect(r.stderr).toContain('--allow-unsigned');
    });

    it('1.1.0 whose provenance statement was altered after signing: PROVENANCE_INVALID', () => {
      const r = refused({ attestations: 'tampered' });
      expect([r.code, r.refusal], r.stderr).toEqual([3, 'PROVENANCE_INVALID']);
    });

    it('1.1.0 served as other bytes than the sha512 its packument names: INTEGRITY_MISMATCH', () => {
      const r = refused({ swapTarball: 'stale' });
      expect([r.code, r.refusal], r.stderr).toEqual([3, 'INTEGRITY_MISMATCH']);
    });

    it('an override of one refusal does not admit the other: --allow-unsigned with another publisher is still PUBLISHER_CHANGED', () => {
      const r = refused({ identity: MOVED_11 }, ['--allow-unsigned']);
      expect([r.code, r.refusal], r.stderr).toEqual([3, 'PUBLISHER_CHANGED']);
    });
  });

  describe('upgrade without --yes and without a terminal', () => {
    it('shows what is known without running it, asks nothing, exits 1, and removes the store entry it made: nothing changed', () => {
      reg.publish(DEMO_SERVER, '1.1.0'); // genuine
      const before = trustState(home);
      const launches = auditEvents(home).filter((e) => e.event === 'launch').length;
      const r = upgrade(home, []);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toContain(`Server '${ID}': ${DEMO_SERVER} 1.0.0 -> 1.1.0\n`);
      expect(r.stdout).toContain(`  source    ${PINNED.repository}\n`);
      // The new version was not run: no surface diff, no launch (staged or not) in the audit log.
      expect(r.stdout).not.toMatch(/^ +added +reverse/m);
      expect(auditEvents(home).filter((e) => e.event === 'launch')).toHaveLength(launches);
      expect(r.stdout).toContain('Nothing was changed, and 1.1.0 was not run. To see its surface diff first: --preview');
      expect(r.stdout).not.toContain('Switched');
      expect(trustState(home)).toEqual(before);
      expect(storeEntries(home)).toEqual([V10.entry]);
    });

    it('--preview runs it out of band and shows the surface diff, then switches nothing (exit 0)', () => {
      const before = trustState(home);
      const r = upgrade(home, ['--preview']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^ +added +reverse/m);
      expect(r.stdout).toContain(`Preview: nothing was switched. To switch: mcp-warden upgrade ${ID} --yes`);
      expect(auditEvents(home).some((e) => e.event === 'launch' && e.staged === true)).toBe(true);
      expect(trustState(home)).toEqual(before);
      expect(storeEntries(home)).toEqual([V10.entry]);
    });
  });

  describe('upgrade --yes to 1.1.0 built by the same publisher', () => {
    let r: CliResult;
    let before: ReturnType<typeof trustState>;
    let tree10: string;
    beforeAll(() => {
      reg.publish(DEMO_SERVER, '1.1.0'); // genuine: the release workflow of the pinned repository, tag v1.1.0
      before = trustState(home);
      tree10 = readJson<InstallJson>(path.join(entryDir(home, V10.entry), 'install.json')).tree.sha256;
      r = upgrade(home, ['--yes']);
    });

    it('shows both versions, both integrities, the tree digest change and who built it', () => {
      expect(r.code, r.stderr).toBe(0);
      const tree11 = readJson<InstallJson>(path.join(entryDir(home, V11.entry), 'install.json')).tree.sha256;
      expect(tree11).not.toBe(tree10);
      const out = r.stdout;
      expect(out).toContain(`Server '${ID}': ${DEMO_SERVER} 1.0.0 -> 1.1.0\n`);
      expect(out).toContain(`Integrity   ${V10.integrity}\n         -> ${V11.integrity}\n`);
      expect(out).toContain(`Tree        ${tree10}\n         -> ${tree11}\n`);
      expect(out).toContain(`  source    ${PINNED.repository}\n`);
      expect(out).toContain(`  workflow  ${PINNED.workflow}\n`);
      expect(out).toContain('  ref       refs/tags/v1.1.0\n');
      expect(out).toContain(`  commit    ${GENUINE_11.commit}\n`);
      expect(out).toContain('Same publisher as pinned.\n');
      expect(out).toContain(`Store       ${entryDir(home, V11.entry)}\n`);
      expect(out).toContain(`Switched '${ID}' to ${DEMO_SERVER}@1.1.0`);
    });

    it('shows the surface diff against the lock: the added reverse tool and the new serverInfo (its version, shown), nothing else', () => {
      const diff = r.stdout.slice(r.stdout.indexOf('Surface against the lock:\n'));
      expect(diff).toMatch(new RegExp(`^${ID}: DRIFT \\(most severe: \\w+\\)$`, 'm'));
      const changed = diff.split('\n').filter((l) => /^ {2}\w/.test(l));
      expect(changed).toHaveLength(2);
      expect(changed[0]).toBe('  initialize result changed  members: serverInfo');
      expect(changed[1]).toMatch(/^ {2}added +reverse\b/);
      expect(diff).toContain('    served serverInfo: {"name":"demo-server","version":"1.1.0"}\n');
    });

    it('points servers.json at the new store entry, keeping the pinned publisher and "required"', () => {
      const s = serverEntry(home);
      expect(s.package).toEqual({ name: DEMO_SERVER, version: '1.1.0', integrity: V11.integrity, store: V11.entry });
      expect(s.command).toBe(NODE);
      expect(s.args).toEqual([path.join(pkgDir(home, V11.entry), 'server.mjs')]);
      expect(s.provenance).toBe('required');
      expect(s.identity).toEqual(PINNED);
    });

    it("replaces the old version's allowlist entries by the new version's, with the new provenance", () => {
      const entries = allowlisted(home);
      expect(entries.filter((e) => inside(e.path, entryDir(home, V10.entry)))).toEqual([]);
      const tree = entries.find((e) => e.kind === 'package' && e.path === pkgDir(home, V11.entry));
      expect(tree?.provenance).toMatchObject({ package: `${DEMO_SERVER}@1.1.0`, integrity: V11.integrity, publisher: { ...PINNED, ref: 'refs/tags/v1.1.0', commit: GENUINE_11.commit } });
      expect(entries.find((e) => e.kind === 'script')?.path).toBe(path.join(pkgDir(home, V11.entry), 'server.mjs'));
    });

    it('locks the new surface (reverse in tools.lock) and changes warden.lock, in the same step', () => {
      const lock = member(readHomeJson(home, 'tools.lock').servers, ID);
      expect(lock.tools.map((t) => t.name)).toEqual(['add', 'echo', 'reverse']);
      expect(lock.args).toEqual([path.join(pkgDir(home, V11.entry), 'server.mjs')]);
      const after = trustState(home).files;
      for (const f of TRUST_FILES) expect(after[f], `${f} must have changed`).not.toBe(before.files[f]);
      expect(JSON.stringify(readHomeJson(home, 'warden.lock').servers[ID])).toContain('reverse');
    });

    it('audits package_upgraded, each allowlist removal and addition, and the staged try marked "staged": true', () => {
      const events = auditEvents(home);
      const upgraded = events.filter((e) => e.event === 'package_upgraded');
      expect(upgraded).toEqual([
        expect.objectContaining({
          server: ID,
          package: DEMO_SERVER,
          from: { version: '1.0.0', integrity: V10.integrity, store: V10.entry },
          to: { version: '1.1.0', integrity: V11.integrity, store: V11.entry },
          provenance: { ...PINNED, ref: 'refs/tags/v1.1.0', commit: GENUINE_11.commit },
          by: `upgrade ${ID}`,
        }),
      ]);
      const changes = events.filter((e) => e.event === 'allowlist_changed' && e.by === `upgrade ${ID}`);
      const removed = changes.filter((e) => e.action === 'remove').map((e) => e.path as string);
      const added = changes.filter((e) => e.action === 'add').map((e) => e.path as string);
      expect(removed).toContain(pkgDir(home, V10.entry));
      expect(removed.every((p) => inside(p, entryDir(home, V10.entry)))).toBe(true);
      expect(added).toContain(pkgDir(home, V11.entry));
      expect(added.every((p) => inside(p, entryDir(home, V11.entry)))).toBe(true);
      const staged = events.filter((e) => e.staged === true);
      expect(staged.some((e) => e.event === 'launch')).toBe(true);
      expect(events.some((e) => e.event === 'provenance_override')).toBe(false);
    });

    it('the new store entry is sealed; the old one stays until store gc, which keeps it while it is under an hour old', () => {
      expect(storeEntries(home).sort()).toEqual([V10.entry, V11.entry].sort());
      const writable = Object.entries(treeSnapshot(entryDir(home, V11.entry))).filter(([, v]) => !v.startsWith('link') && parseInt(v.split(' ')[1] as string, 8) & 0o222);
      expect(writable).toEqual([]);
      const gc = cli(home, ['store', 'gc']);
      expect(gc.code, gc.stderr).toBe(0);
      expect(gc.stdout).toMatch(new RegExp(`^kept +${V10.entry.replace(/[.+]/g, '\\$&')} +installed \\d+ min ago`, 'm'));
      expect(gc.stdout).toMatch(new RegExp(`^kept +${V11.entry.replace(/[.+]/g, '\\$&')} +named by server ${ID}$`, 'm'));
      expect(gc.stdout).toContain('Nothing to remove');
      expect(storeEntries(home).sort()).toEqual([V10.entry, V11.entry].sort());
    });

    it('mcp-warden run serves the new version, reverse included, to an MCP client', async () => {
      const { client } = await connectClient(home, ID);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(['add', 'echo', 'reverse']);
        const reversed = await client.callTool({ name: 'reverse', arguments: { text: 'warden' } });
        expect(reversed.content).toEqual([{ type: 'text', text: 'nedraw' }]);
      } finally {
        await client.close();
      }
    });

    it('upgrading again: the registry has nothing newer, exit 0, nothing changed', () => {
      const now = trustState(home);
      const again = upgrade(home, ['--yes']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`Server '${ID}' runs ${DEMO_SERVER}@1.1.0; the registry has nothing newer.`);
      expect(trustState(home)).toEqual(now);
    });

    it('outdated then says current, also when the latest dist-tag points back at 1.0.0 (nothing newer, as upgrade says)', () => {
      const current = cli(home, ['outdated', '--json'], { env: reg.env });
      expect(JSON.parse(current.stdout).servers).toEqual([expect.objectContaining({ version: '1.1.0', newest: '1.1.0', state: 'current' })]);
      reg.publish(DEMO_SERVER, '1.1.0', { distTags: { latest: '1.0.0' } }); // the maintainers moved latest back
      try {
        const r = cli(home, ['outdated', '--json'], { env: reg.env });
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout).servers).toEqual([{ id: ID, package: DEMO_SERVER, version: '1.1.0', newest: '1.0.0', state: 'current', pinned: PINNED }]);
        const again = upgrade(home, ['--yes']);
        expect(again.code, again.stderr).toBe(0);
        expect(again.stdout).toContain('the registry has nothing newer');
      } finally {
        reg.publish(DEMO_SERVER, '1.1.0', { distTags: {} }); // latest = the highest version again
      }
    });
  });
});
