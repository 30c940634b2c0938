import fs from 'node:fs';
import path from 'node:path';

/** Writes a server's `rules` into servers.json by hand, as an operator editing the file would (not pinned). */
export function writeRules(home: string, id: string, rules: unknown): void {
  const file = path.join(home, 'servers.json');
  const servers = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (rules === undefined) delete servers.servers[id].rules;
  else servers.servers[id].rules = rules;
  fs.writeFileSync(file, JSON.stringify(servers, null, 2) + '\n');
}

/** The tool of a listing by name. */
export function toolNamed<T extends { name: string }>(tools: T[], name: string): T {
  const t = tools.find((x) => x.name === name);
  if (!t) throw new Error(`no tool ${name} in ${tools.map((x) => x.name).join(', ')}`);
  return t;
}
