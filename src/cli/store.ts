import { processesUsing } from '../launch/proc.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { collectStoreGarbage } from '../store/store-gc.js';
import { escaped, line, printTable } from './output.js';

// `store gc`: removes the sealed store's entries no server names, and abandoned half-made ones
// (store/store-gc.ts; the store's layout: docs/formats.md, "store/").

/** A size for people: 1.2 MiB, 340 KiB, 12 B. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  for (; v >= 1024 && i < units.length - 1; i++) v /= 1024;
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export async function storeGc(homeFlag: string | undefined, dryRun: boolean): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const onWait = (): void => void process.stderr.write(`mcp-warden: waiting for the lock of ${paths.storeDir} (an install or another gc holds it)\n`);
  const r = await collectStoreGarbage(paths, { dryRun, processesUsing, onWait });
  const verb = dryRun ? 'would remove' : 'removed';
  const rows = [
    ...r.removed.map((e) => [verb, e.name, humanBytes(e.bytes), e.why === 'half-made' ? 'half-made, older than an hour' : 'no server names it']),
    ...r.kept.map((e) => ['kept', e.name, '', e.why]),
  ];
  if (rows.length > 0) printTable(rows);
  for (const p of r.problems) line(escaped(`not an entry: ${p.name}: ${p.problem}`));
  const total = r.removed.reduce((sum, e) => sum + e.bytes, 0);
  if (r.removed.length === 0) line(`Nothing to remove in ${paths.storeDir}.`);
  else line(`${dryRun ? 'Would free' : 'Freed'} ${humanBytes(total)} in ${r.removed.length} entr${r.removed.length === 1 ? 'y' : 'ies'}${dryRun ? ' (--dry-run: nothing was removed)' : ''}.`);
  return 0;
}
