import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { parseClientConfig, readClientConfig, CLIENT_LABELS } from '../clientconfig/read.js';
import { applySplices, sameValue, type Splice } from '../clientconfig/rewrite.js';
import { WardenError } from '../error.js';
import { openHome } from '../store/home.js';
import { loadImports, locationKey, updateImports } from '../store/imports.js';
import { resolveHome } from '../store/paths.js';
import { backup, rewriteClientFile } from '../clientconfig/write.js';
import { escaped, escapedLines, line, printJson } from './output.js';

// `mcp-warden unwrap <client-config-file>`: puts back, byte for byte, every entry `import` replaced in that file,
// where the entry is still what the warden wrote. An entry edited since is left alone and reported. The servers
// stay enrolled in the home (allowlist, servers.json, locks), so importing again is quick.

export interface UnwrapOptions {
  dryRun?: boolean;
  json?: boolean;
}

type Result = 'restored' | 'changed' | 'missing';

export async function unwrapVerb(homeFlag: string | undefined, file: string, opts: UnwrapOptions): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const cfg = readClientConfig(path.resolve(file));
  const abs = cfg.file;
  const imports = loadImports(paths);
  const rec = Object.hasOwn(imports.files, abs) ? imports.files[abs] : undefined;
  if (!rec || rec.entries.length === 0) {
    throw new WardenError('USAGE', `the warden has no record of importing ${abs} (in ${paths.imports}), so there is nothing to unwrap. Was it imported with another --home?`);
  }
  const byLocation = new Map(cfg.entries.map((e) => [locationKey(e.location), e]));
  const splices: Splice[] = [];
  const outcomes: { name: string; id: string; result: Result; detail?: string }[] = [];
  const restored = new Set<string>();
  for (const r of rec.entries) {
    const name = r.location.at(-1) as string;
    const entry = byLocation.get(locationKey(r.location));
    if (!entry) {
      outcomes.push({ name, id: r.id, result: 'missing', detail: 'no longer in the file; its original is kept in imports.json' });
    } else if (!sameValue(entry.value, r.wrapped)) {
      outcomes.push({ name, id: r.id, result: 'changed', detail: 'edited since it was imported, so it was left as it is; its original is kept in imports.json' });
    } else {
      splices.push({ offset: entry.offset, length: entry.length, text: r.original });
      outcomes.push({ name, id: r.id, result: 'restored' });
      restored.add(locationKey(r.location));
    }
  }
  const after = applySplices(cfg.text, splices);
  // A TOML file's restored tables are read again before anything is written: the result must still be Codex's file.
  if (cfg.kind === 'codex' && splices.length > 0) parseClientConfig(abs, after, abs);
  const diff = opts.dryRun && splices.length > 0 ? createTwoFilesPatch(abs, abs, cfg.text, after, 'now', 'after unwrap') : undefined;
  let backupFile: string | undefined;
  if (!opts.dryRun && splices.length > 0) {
    backupFile = backup(paths, abs, cfg.text);
    rewriteClientFile(cfg, after);
    // Only the restored records are removed, from imports.json as read under its lock (store/update.ts).
    await updateImports(paths, (now) => {
      const current = Object.hasOwn(now.files, abs) ? now.files[abs] : undefined;
      if (!current) return;
      const kept = current.entries.filter((r) => !restored.has(locationKey(r.location)));
      if (kept.length > 0) now.files[abs] = { ...current, entries: kept };
      else delete now.files[abs];
    });
  }
  if (opts.json) {
    printJson({ file: abs, client: cfg.kind, dryRun: opts.dryRun === true, ...(backupFile ? { backup: backupFile } : {}), ...(diff !== undefined ? { diff } : {}), entries: outcomes });
  } else {
    if (diff) process.stdout.write(escapedLines(diff));
    const restored = outcomes.filter((o) => o.result === 'restored').length;
    line(escaped(`${abs} (${CLIENT_LABELS[cfg.kind]}): ${restored} entr${restored === 1 ? 'y' : 'ies'} ${opts.dryRun ? 'would be ' : ''}restored${opts.dryRun ? ' (dry run: nothing was written)' : ''}`));
    for (const o of outcomes) line(escaped(`  ${o.result.padEnd(9)}${o.name} (server '${o.id}')${o.detail ? ` — ${o.detail}` : ''}`));
    if (backupFile) line(escaped(`Backup of the file as it was: ${backupFile}. The servers stay enrolled in ${paths.home}.`));
  }
  return outcomes.every((o) => o.result === 'restored') ? 0 : 1;
}

