import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { printProposal } from '../../dist/cli/sandbox-proposal.js';
import { newObserved } from '../../dist/sandbox/observe.js';
import { proposalFor } from '../../dist/sandbox/propose.js';
import { resolveHome } from '../../dist/store/paths.js';
import type { ServerConfig } from '../../dist/store/servers.js';
import { MEMORY, NODE } from '../helpers/warden.js';

// What the sandbox proposal offers and how it labels what it kept, judged in-process on what an observation
// could have seen (src/sandbox/propose.ts; no launch: the observation itself is tested in proposal.test.ts).

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync('/var/tmp/warden-offers-');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const memory = (passEnv: string[]): ServerConfig => ({ command: NODE, args: [MEMORY], env: {}, passEnv } as unknown as ServerConfig);

describe("server-memory's MEMORY_FILE_PATH offer", () => {
  it('is made when nothing sets the variable', () => {
    const p = proposalFor(resolveHome(path.join(dir, 'home')), 'memory', memory([]), newObserved(), undefined, []);
    expect(p.env.map((e) => e.name)).toEqual(['MEMORY_FILE_PATH']);
  });

  it('is not made when the client passes the variable itself (passEnv): its value is the one the server uses', () => {
    const p = proposalFor(resolveHome(path.join(dir, 'home')), 'memory', memory(['MEMORY_FILE_PATH']), newObserved(), undefined, []);
    expect(p.env).toEqual([]);
  });
});

describe('the places kept real', () => {
  it("are printed apart: those its configuration names, and its code and the warden's package store (not named by its configuration)", () => {
    const paths = resolveHome(path.join(dir, 'home'));
    const named = path.join(dir, 'notes');
    const code = path.join(dir, 'code');
    const store = path.join(paths.home, 'store');
    const seen = { ...newObserved(), dirs: [dir], kept: [named, code, store] };
    const p = proposalFor(paths, 'notes', { command: NODE, args: [], env: {}, passEnv: [] } as unknown as ServerConfig, seen, undefined, [path.join(code, 'index.js')]);
    expect(p.code).toEqual([code, store]);
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    try {
      printProposal(p, path.join(paths.home, 'proposals/notes.sandbox.json'), (rest) => `mcp-warden ${rest}`);
    } finally {
      spy.mockRestore();
    }
    const text = out.join('');
    expect(text).toContain(`  written for real, as its configuration names them: ${named}\n`);
    expect(text).toContain(`  kept as attested, not watched (the server's own code, the warden's package store or install; never granted): ${code}, ${store}\n`);
  });
});
