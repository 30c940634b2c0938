import fs from 'node:fs';
import { checkAuditFiles } from '../audit/log.js';
import { verifyChain } from '../audit/verify.js';
import { resolveHome } from '../store/paths.js';
import { escaped, line, printJson } from './output.js';

export function auditVerify(homeFlag: string | undefined, json: boolean): number {
  const paths = resolveHome(homeFlag);
  const r = verifyChain(paths.audit);
  if (json) printJson({ file: paths.audit, ...r });
  else if (r.ok) line(`${paths.audit}: ${r.lines} lines, chain intact.`);
  else line(escaped(`${paths.audit}: chain broken at line ${r.badLine}: ${r.reason}. Lines before it are intact; compare with a backup to see what changed.`));
  return r.ok ? 0 : 1;
}

export function auditShow(homeFlag: string | undefined, json: boolean): number {
  const paths = resolveHome(homeFlag);
  checkAuditFiles(paths.audit);
  const text = fs.existsSync(paths.audit) ? fs.readFileSync(paths.audit, 'utf8') : '';
  const events = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  if (json) {
    printJson(events);
    return 0;
  }
  // Every field through the one escaper: a value is the client's or a server's text (a called tool's name, a line
  // of the module guard's report), and a newline in it must not print as a second event, nor a sequence act on
  // the terminal.
  for (const e of events) {
    const { ts, prev: _prev, event, server, ...rest } = e;
    const facts = Object.entries(rest)
      .filter(([, v]) => typeof v !== 'object')
      .map(([k, v]) => `${escaped(k)}=${escaped(String(v))}`)
      .join(' ');
    line(`${escaped(String(ts))}  ${escaped(String(event)).padEnd(18)} ${server ? escaped(String(server)) + '  ' : ''}${facts}`);
  }
  return 0;
}
