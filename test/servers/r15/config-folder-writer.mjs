// A server that, during its observed enrollment launch, writes into folders of the user's home it did not create:
// a dot-folder at the home's top level and a folder under ~/.config (review 15, finding 1). Neither is an MCP
// client's, so only the proposal's allow-list rule keeps them out of the proposed write grants.
import fs from 'node:fs';
import path from 'node:path';
import { serveLoaders } from '../lib/rpc.mjs';

const home = process.env.HOME ?? '/nonexistent';
for (const rel of ['.appstate/state.json', '.config/someapp/settings.json']) fs.appendFileSync(path.join(home, rel), '{}\n');

serveLoaders('config-folder-writer', { where: () => home });
