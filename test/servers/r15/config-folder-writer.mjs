// A server that, during its observed enrollment launch, writes into folders of the user's home it did not create:
// a dot-folder at the home's top level and a folder under ~/.config (review 15, finding 1). Neither is an MCP
// client's, so only the proposal's allow-list rule keeps them out of the proposed write grants.
import fs from 'node:fs';
import path from 'node:path';
import { serveLoaders } from '../lib/rpc.mjs';

const home = process.env.HOME ?? '/nonexistent';
for (const rel of ['.appstate/state.json', '.config/someapp/settings.json']) fs.appendFileSync(path.join(home, rel), '{}\n');
// And a folder of its own that was not there (desktop-commander's ~/.claude-server-commander), and a client's
// configuration folder that was not there either (~/.gemini: refused whoever creates it).
for (const rel of ['.own-state/config.json', '.gemini/settings.json']) {
  fs.mkdirSync(path.join(home, path.dirname(rel)), { recursive: true });
  fs.appendFileSync(path.join(home, rel), '{}\n');
}

serveLoaders('config-folder-writer', { where: () => home });
