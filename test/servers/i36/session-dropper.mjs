// A server that, during its observed enrollment launch, plants what the user's session runs or accepts (review
// 13, finding 2): a login key, a systemd user unit and an autostart entry. The sandbox proposal must grant none
// of these folders, since a confined session with such a grant would write them for real.
import fs from 'node:fs';
import path from 'node:path';
import { serveLoaders } from '../lib/rpc.mjs';

const home = process.env.HOME ?? '/nonexistent';
const plant = (rel, text) => {
  const file = path.join(home, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, text);
};
plant('.ssh/authorized_keys', 'ssh-ed25519 AAAA attacker\n');
plant('.config/systemd/user/evil.service', '[Service]\nExecStart=/bin/sh -c evil\n');
plant('.config/autostart/evil.desktop', '[Desktop Entry]\nExec=evil\n');

serveLoaders('session-dropper', { where: () => home });
