import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBundle } from '../../src/fleet/create.js';
import { WardenError } from '../../src/error.js';
import { parseBundle, renderBundle } from '../../src/store/bundle/format.js';
import { resolveHome } from '../../src/store/paths.js';
import { sharedMachineA, tempDir } from './helpers.js';

let root: string;
let homeA: string;
const at = new Date('2026-12-01T12:00:00.000Z');

beforeAll(() => {
  root = tempDir('warden-bundle-format-');
  homeA = sharedMachineA(root).homeA;
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function refusal(text: string): WardenError {
  try {
    parseBundle(Buffer.from(text), '/x/b.json');
  } catch (err) {
    if (err instanceof WardenError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('bundle format', () => {
  it('the same setup, serial and time render to the same bytes, and reading them renders them again', () => {
    const a = createBundle(resolveHome(homeA), { serial: 7, machineLocal: [], accept: {}, now: at });
    const b = createBundle(resolveHome(homeA), { serial: 7, machineLocal: [], accept: {}, now: at });
    expect(a.text).toBe(b.text);
    expect(renderBundle(parseBundle(Buffer.from(a.text), 'b.json'))).toBe(a.text);
    expect(a.text.endsWith('}\n')).toBe(true);
  });

  it('an unknown key is refused, naming the file and where', () => {
    const { text } = createBundle(resolveHome(homeA), { serial: 7, machineLocal: [], accept: {}, now: at });
    const doc = JSON.parse(text);
    doc.servers.basic.env = { SECRET_TOKEN: 'x' };
    const err = refusal(JSON.stringify(doc));
    expect(err.code).toBe('BUNDLE_INVALID');
    expect(err.message).toContain('/x/b.json');
    expect(err.message).toContain('/servers/basic');
  });

  it('a lock entry whose hashes do not add up is refused', () => {
    const { text } = createBundle(resolveHome(homeA), { serial: 7, machineLocal: [], accept: {}, now: at });
    const doc = JSON.parse(text);
    doc.toolsLock.basic.tools[0].tool.description = 'something else';
    const err = refusal(JSON.stringify(doc));
    expect(err.code).toBe('BUNDLE_INVALID');
    expect(err.message).toContain('/toolsLock');
  });

  it('a server without its lock entries is refused', () => {
    const { text } = createBundle(resolveHome(homeA), { serial: 7, machineLocal: [], accept: {}, now: at });
    const doc = JSON.parse(text);
    delete doc.wardenLock.basic;
    expect(refusal(JSON.stringify(doc)).message).toContain("/wardenLock has no entry for server 'basic'");
  });

  it('a serial that is not a positive integer is refused', () => {
    const { text } = createBundle(resolveHome(homeA), { serial: 7, machineLocal: [], accept: {}, now: at });
    const doc = JSON.parse(text);
    doc.serial = 1.5;
    expect(refusal(JSON.stringify(doc)).message).toContain('/serial');
  });

  it('the default serial is the current Unix time, or above the last one this home created', () => {
    const first = createBundle(resolveHome(homeA), { machineLocal: [], accept: {}, now: at });
    expect(first.bundle.serial).toBe(Math.floor(at.getTime() / 1000));
    expect(fs.existsSync(path.join(homeA, 'bundle-state.json'))).toBe(false); // only the verb records it
  });
});
