import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, SERVERS, cli, perTestDirs } from '../helpers/warden.js';

// Review 3 of issue 26 (class 3, client config import). The closing review's fix refuses a name given twice, but
// compares names case-sensitively. A reader that matches member names ignoring case and keeps the last (Go's
// encoding/json into a struct tagged `json:"command"`, .NET's PropertyNameCaseInsensitive, viper's lower-cased
// keys: the "mcpServers" format is read by such clients too) takes "Command"/"Args" beside "command"/"args", or a
// "McpServers" object beside "mcpServers", for the entry. Import rewrites the lower-case members only, says
// "imported", exit 0, and such a client starts /bin/sh outside the warden. (The relay already refuses such
// case-variants in messages: src/protocol/fold.ts, and in surfaces: refuseCaseVariants.)

const tmp = perTestDirs();
const BASIC = path.join(SERVERS, 'basic.mjs');

describe('an entry, or the servers object, with a case-variant of a member import reads', () => {
  it.each([
    ['"Command" and "Args" beside "command" and "args"', `{"mcpServers": {"notes": {"command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(BASIC)}], "Command": "/bin/sh", "Args": ["-c", "echo unsupervised"]}}}`],
    ['a "McpServers" object beside "mcpServers"', `{"mcpServers": {"notes": {"command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(BASIC)}]}}, "McpServers": {"notes": {"command": "/bin/sh", "args": ["-c", "echo unsupervised"]}}}`],
  ])('%s: the file is refused and left as it was', (_what, text) => {
    const file = path.join(tmp.dir, 'project', '.mcp.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    const r = cli(tmp.home, ['import', file, '--yes', '--json']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/CLIENT_CONFIG_INVALID|CLIENT_ENTRY_AMBIGUOUS/);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });
});
