// A real SDK v2 server (@modelcontextprotocol/server 2.4.0) served by its recommended stdio entry,
// `serveStdio()`: both eras by default (a 2025 `initialize` or a 2026-07-28 `server/discover`), modern only
// with LEGACY=reject (`{ legacy: 'reject' }`), or 2025 only (the hand-wired `server.connect(new
// StdioServerTransport())` of a server that predates the revision: server/discover is "method not found").
// One tool that echoes, one that asks the user through the modern era's `input_required` (an embedded
// elicitation, then the retry), a prompt, a resource and instructions; `grow` adds a tool at runtime, which
// announces itself as a tools list change (unsolicited in 2025, to `subscriptions/listen` subscribers in
// 2026-07-28). SCENARIO_FILE (read for each connection the
// factory serves) may change `instructions`, `echoDescription`, `promptDescription`, `resourceDescription`;
// LOG_FILE gets every line the process reads. The scenario's `entry` ("serve", "reject", "legacy-only"), read
// at start, overrides LEGACY, so one enrolled server can change the eras it serves. `eraCapabilities: true` makes
// it describe itself per era as Python `mcp` 2.3.0's MCPServer does (tools `listChanged` and resources
// `subscribe` true to server/discover, false to a 2025 initialize: docs/adr/0055); `version` ({ legacy, modern })
// changes serverInfo.version in one era.
import fs from 'node:fs';
import { McpServer, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const scenario = () => {
  const f = process.env.SCENARIO_FILE;
  const text = f && fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
  return text ? JSON.parse(text) : {};
};
const entry = scenario().entry ?? (process.env.LEGACY === 'reject' ? 'reject' : 'serve');
if (process.env.LOG_FILE) process.stdin.on('data', (d) => fs.appendFileSync(process.env.LOG_FILE, d));

function factory(ctx) {
  const s = scenario();
  const era = ctx?.era ?? 'legacy';
  const perEra = s.eraCapabilities ? era === 'modern' : true;
  const server = new McpServer(
    { name: 'sdk2-serve-stdio', version: s.version?.[era] ?? '1.0.0' },
    { capabilities: { tools: { listChanged: perEra }, prompts: {}, resources: s.eraCapabilities ? { subscribe: perEra } : {} }, instructions: s.instructions ?? 'Use echo to echo.' },
  );
  server.registerTool('echo', { description: s.echoDescription ?? 'Echoes its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  server.registerTool('deploy', { description: 'Deploys after the user confirms.', inputSchema: z.object({ env: z.string() }) }, async ({ env }, ctx) => {
    const confirmed = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
    if (confirmed?.confirm !== true) {
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: `Deploy to ${env}?`, requestedSchema: z.object({ confirm: z.boolean() }) }) },
        requestState: `server-state:${env}`,
      });
    }
    return { content: [{ type: 'text', text: `deployed to ${env}` }] };
  });
  server.registerTool('grow', { description: 'Adds a tool named grown.' }, async () => {
    if (!server.isConnected()) return { content: [{ type: 'text', text: 'not connected' }] };
    try {
      server.registerTool('grown', { description: 'Grown at runtime.' }, async () => ({ content: [{ type: 'text', text: 'grown' }] }));
    } catch {
      // already grown
    }
    return { content: [{ type: 'text', text: 'grew' }] };
  });
  server.registerPrompt('greet', { description: s.promptDescription ?? 'Greets.' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }] }));
  server.registerResource('note', 'note://one', { description: s.resourceDescription ?? 'A note.', mimeType: 'text/plain' }, async (uri) => ({ contents: [{ uri: uri.href, text: 'the note' }] }));
  return server;
}

if (entry === 'legacy-only') await factory().connect(new StdioServerTransport());
else serveStdio(factory, { legacy: entry === 'reject' ? 'reject' : 'serve' });
