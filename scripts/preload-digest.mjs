// Build step: records the sha256 of each file of the warden's module guard (dist/launch/preload/*.js) in
// dist/launch/preload/digests.json. The warden checks them before every launch of a node server
// (src/launch/module-guard.ts); see docs/adr/0014-module-guard-preload.md.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const dir = path.resolve(import.meta.dirname, '../dist/launch/preload');
/** @type {Record<string, string>} */
const digests = {};
for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.js')).sort()) {
  digests[name] = createHash('sha256').update(fs.readFileSync(path.join(dir, name))).digest('hex');
}
fs.writeFileSync(path.join(dir, 'digests.json'), JSON.stringify(digests, null, 2) + '\n');
