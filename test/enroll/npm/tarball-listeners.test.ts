import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { create } from 'tar';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { manifestOfTarball } from '../../../src/enroll/npm/tarball.js';
import { tempDir } from '../../helpers/warden.js';

// Issue 28 item 4: installing a large tree printed "MaxListenersExceededWarning: Possible EventEmitter memory leak
// detected. 11 close listeners added to [Gunzip]" from the warden's own process. Reading a package.json that comes
// after megabytes of other files makes the inflater push back many times; each wait must leave no listener.

let dir: string;
const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
beforeEach(() => {
  dir = tempDir();
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
  fs.rmSync(dir, { recursive: true, force: true });
});

it('reads the package.json of a tarball whose first files are megabytes long with no listener left behind and no warning', async () => {
  const root = path.join(dir, 'package');
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(root, 'a-big.bin'), crypto.randomBytes(4 * 1024 * 1024));
  fs.writeFileSync(path.join(root, 'package.json'), '{"name":"big","version":"1.0.0"}');
  const tar = path.join(dir, 'big.tar');
  await create({ cwd: dir, file: tar, portable: true }, ['package/a-big.bin', 'package/package.json']);
  const tgz = zlib.gzipSync(fs.readFileSync(tar));
  const manifest = await manifestOfTarball(tgz, 'big@1.0.0');
  expect(manifest).toMatchObject({ name: 'big', version: '1.0.0' });
  await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
  expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
});
