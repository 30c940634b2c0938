import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE, RawSession, SERVERS, addServer, tempDir } from '../helpers/warden.js';

// ADR 0034: the old single cache, cache/digests.json, "is removed the first time a cache file is written".
// saveDigestCache removes it inside the same try as the write, so a failure to remove it is reported as a
// failure to write the server's own file, naming that file, after it was written. With a directory of the old
// name there (what a careless operator or a restore can leave), every launch that adds to the cache says
// "could not write the digest cache …/digests.ID.json" about a file that is there and current.

let home: string;

beforeAll(() => {
  home = tempDir();
  expect(addServer(home, 'basic', [process.execPath, path.join(SERVERS, 'basic.mjs')]).code).toBe(0);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('an old cache/digests.json the warden cannot remove', () => {
  it("does not make a launch report that it could not write the server's own cache file, which it wrote", async () => {
    const own = path.join(home, 'cache', 'digests.basic.json');
    fs.rmSync(own); // so that this launch adds entries and saves
    fs.mkdirSync(path.join(home, 'cache', 'digests.json'));
    const s = new RawSession(home, 'basic');
    s.send(INITIALIZE + '\n');
    await s.message(1);
    s.close();
    await s.exited;
    expect({ written: fs.existsSync(own), stderr: s.stderr }).toEqual({ written: true, stderr: expect.not.stringContaining(`could not write the digest cache ${own}`) });
  });
});
