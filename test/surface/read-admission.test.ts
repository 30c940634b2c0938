import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TEMPLATES, ReadAdmission } from '../../src/surface/read-admission.js';

// The allow set of a session's gets and reads: an item is admitted only when the warden's own listing showed it
// with the locked digest (enforce), or showed it at all (monitor); a client page only ever takes away.

const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 8 });
const digest = fc.constantFrom('d1', 'd2', 'd3');

describe('ReadAdmission', () => {
  it('admits exactly the listed items equal to the lock in enforce, and exactly the listed ones in monitor', () => {
    fc.assert(
      fc.property(ids, fc.array(digest, { minLength: 8, maxLength: 8 }), fc.array(fc.option(digest), { minLength: 8, maxLength: 8 }), fc.string({ maxLength: 8 }), (names, lockedD, liveD, other) => {
        const locked = Object.fromEntries(names.map((n, i) => [n, lockedD[i] as string]));
        const live: Record<string, string> = {};
        names.forEach((n, i) => {
          const d = liveD[i];
          if (d !== null && d !== undefined) live[n] = d;
        });
        const enforce = new ReadAdmission({ prompts: locked }, true);
        enforce.listed({ prompts: live });
        const monitor = new ReadAdmission({ prompts: locked }, false);
        monitor.listed({ prompts: live });
        for (const n of [...names, other]) {
          const shown = Object.hasOwn(live, n);
          const equal = shown && Object.hasOwn(locked, n) && live[n] === locked[n];
          expect(enforce.read('prompts', n)).toBe(equal ? 'admitted' : shown ? 'changed' : 'unlisted');
          expect(monitor.read('prompts', n)).toBe(shown ? 'admitted' : 'unlisted');
          expect(enforce.read('resources', n)).toBe('unlisted');
        }
      }),
    );
  });

  it("a later listing of the warden's (a re-listing on a list change) decides the set again: what it no longer shows or shows changed leaves it, and what was once refused stays refused when it changes back", () => {
    const a = new ReadAdmission({ prompts: { greet: 'd1', bye: 'd1' } }, true);
    a.listed({ prompts: { greet: 'd1', bye: 'd1' } });
    expect([a.read('prompts', 'greet'), a.read('prompts', 'bye')]).toEqual(['admitted', 'admitted']);
    a.listed({ prompts: { greet: 'd2' } });
    expect([a.read('prompts', 'greet'), a.read('prompts', 'bye')]).toEqual(['changed', 'unlisted']);
    a.listed({ prompts: { greet: 'd1', bye: 'd1' } });
    expect([a.read('prompts', 'greet'), a.read('prompts', 'bye')]).toEqual(['changed', 'admitted']);
  });

  it('admits nothing when the server listed nothing, whatever the lock holds', () => {
    const a = new ReadAdmission({ prompts: { greet: 'd1' }, resources: { 'file:///a': 'd1' }, resourceTemplates: { 'x://{id}': 'd1' } }, true);
    a.listed({});
    expect([a.read('prompts', 'greet'), a.read('resources', 'file:///a'), a.read('resources', 'x://1')]).toEqual(['unlisted', 'unlisted', 'unlisted']);
  });

  it('a client page showing a changed item takes it out of the allow set; a matching one adds nothing', () => {
    const a = new ReadAdmission({ prompts: { greet: 'd1' }, resourceTemplates: { 'x://{id}': 'd1' } }, true);
    a.listed({ prompts: { greet: 'd1' }, resourceTemplates: { 'x://{id}': 'd1' } });
    expect(a.read('resources', 'x://1')).toBe('admitted');
    expect(a.pageItem('prompts', 'greet', 'd1')).toBe(true);
    expect(a.pageItem('prompts', 'other', 'd1')).toBe(false);
    expect(a.read('prompts', 'other')).toBe('unlisted');
    expect(a.pageItem('prompts', 'greet', 'd2')).toBe(false);
    expect(a.read('prompts', 'greet')).toBe('changed');
    expect(a.pageItem('resourceTemplates', 'x://{id}', 'd2')).toBe(false);
    expect(a.read('resources', 'x://1')).toBe('changed');
  });

  it("a URI the listing refused as a resource (changed or added) is not read through a locked template covering it; a listed URI equal to the lock is, whatever template covers it", () => {
    const a = new ReadAdmission({ resources: { 'docs://kept.md': 'd1', 'docs://old.md': 'd1' }, resourceTemplates: { 'docs://{name}': 'd1' } }, true);
    a.listed({ resources: { 'docs://kept.md': 'd1', 'docs://old.md': 'd2', 'docs://new.md': 'd1' }, resourceTemplates: { 'docs://{name}': 'd1' } });
    expect(['docs://kept.md', 'docs://old.md', 'docs://new.md', 'docs://other.md'].map((u) => a.read('resources', u))).toEqual(['admitted', 'changed', 'changed', 'admitted']);
  });

  it('a URI two templates cover is refused when the listing refused either of them (the changed one may describe it), and admitted when neither', () => {
    const a = new ReadAdmission({ resourceTemplates: { 'docs://{name}': 'd1', 'docs://{+path}': 'd1', 'x://{id}': 'd1' } }, true);
    a.listed({ resourceTemplates: { 'docs://{name}': 'd1', 'docs://{+path}': 'd2', 'x://{id}': 'd1' } });
    expect([a.read('resources', 'docs://a'), a.read('resources', 'x://1')]).toEqual(['changed', 'admitted']);
  });

  // Review 26: the work of a read through templates is bounded, not only each template's.
  const heavy = (i: number): string => Array.from({ length: 32 }, (_, j) => `{+v${j}}`).join('') + `/${i}`;

  it(`a listing of more than ${MAX_TEMPLATES} templates admits no read through a template ('unbounded'), and still admits a listed resource`, () => {
    const live = { resources: { 'docs://kept.md': 'd1' }, resourceTemplates: Object.fromEntries(['tickets://{id}', ...Array.from({ length: MAX_TEMPLATES }, (_, i) => heavy(i))].map((t) => [t, 'd1'])) };
    const a = new ReadAdmission(live, true);
    a.listed(live);
    expect([a.read('resources', 'tickets://42'), a.read('resources', 'docs://kept.md')]).toEqual(['unbounded', 'admitted']);
  });

  it('a read that would walk templates past its step budget is refused (unbounded), while an honest read of a long URI is decided', () => {
    const locked = { resourceTemplates: { 'tickets://{id}': 'd1', 'docs://{+path}{?rev}': 'd1' } };
    const a = new ReadAdmission(locked, true);
    a.listed({ resourceTemplates: { ...locked.resourceTemplates, ...Object.fromEntries(Array.from({ length: MAX_TEMPLATES - 2 }, (_, i) => [heavy(i), 'd2'])) } });
    expect(a.read('resources', `tickets://${'4'.repeat(200)}`)).toBe('unbounded');
    const honest = new ReadAdmission(locked, true);
    honest.listed(locked);
    expect(honest.read('resources', `docs://${'a/'.repeat(4000)}?rev=1`)).toBe('admitted');
  });

  it("a completion is admitted for a prompt or a template (by its text) or URI the session admits, and refused for a changed or unlisted one", () => {
    const locked = { prompts: { greet: 'd1', old: 'd1' }, resourceTemplates: { 'tickets://{id}': 'd1', 'docs://{name}': 'd1' } };
    const a = new ReadAdmission(locked, true);
    a.listed({ prompts: { greet: 'd1', old: 'd2' }, resourceTemplates: { 'tickets://{id}': 'd1', 'docs://{name}': 'd2' } });
    expect([a.completion('prompts', 'greet'), a.completion('prompts', 'old'), a.completion('prompts', 'never')]).toEqual(['admitted', 'changed', 'unlisted']);
    expect([a.completion('resources', 'tickets://{id}'), a.completion('resources', 'tickets://42'), a.completion('resources', 'docs://{name}'), a.completion('resources', 'docs://a')]).toEqual(['admitted', 'admitted', 'changed', 'changed']);
  });
});
