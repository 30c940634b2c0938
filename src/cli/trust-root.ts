import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { fetchTrustRoot, TUF_MIRROR } from '../provenance/tuf-fetch.js';
import { authoritiesOf, type Authority, type TrustRoot } from '../provenance/trust-root.js';
import { readTrustRootInput, trustRootFromInput } from '../provenance/trust-root-source.js';
import { openHome } from '../store/home.js';
import { resolveHome } from '../store/paths.js';
import { currentTrustRoot, loadTrustRoot, SHIPPED_ORIGIN, updateTrustRoot, withTufCache } from '../store/trust-root-file.js';
import { escaped, line, printJson, printTable } from './output.js';

// `trust-root show` and `trust-root update`: the sigstore trust material provenance is verified against
// (docs/guide.md, "The trust root"; the file: docs/formats.md, "trust-root.json").

/** Past this age `show` says to update: sigstore rotates keys, and a root knows only the keys of its date. */
export const OLD_AFTER_DAYS = 180;
const DAY_MS = 24 * 60 * 60 * 1000;

interface AuthorityView {
  kind: Authority['kind'];
  name: string;
  start: string;
  /** null: open (no end). */
  end: string | null;
  /** 'ended': the window closed before now; 'not yet': it opens later. */
  state: 'valid' | 'ended' | 'not yet';
}

function view(root: TrustRoot, now: Date) {
  const ageDays = Math.floor((now.getTime() - new Date(root.data.date).getTime()) / DAY_MS);
  const authorities: AuthorityView[] = authoritiesOf(root.data).map((a) => ({
    kind: a.kind,
    name: a.name,
    start: a.start,
    end: a.end ?? null,
    state: a.end !== undefined && new Date(a.end) < now ? 'ended' : new Date(a.start) > now ? 'not yet' : 'valid',
  }));
  return {
    origin: root.origin === SHIPPED_ORIGIN ? 'shipped' : 'home',
    file: root.origin === SHIPPED_ORIGIN ? null : root.origin,
    date: root.data.date,
    source: root.data.source,
    ageDays,
    old: ageDays > OLD_AFTER_DAYS,
    authorities,
  };
}

const OLD_ADVICE = 'sigstore rotates keys; a signature made with a key newer than this root cannot be verified: run `mcp-warden trust-root update`';

export function trustRootShow(homeFlag: string | undefined, json: boolean): number {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  const v = view(loadTrustRoot(paths), new Date());
  if (json) {
    printJson(v);
    return 0;
  }
  line(`Sigstore trust root: ${v.file ?? SHIPPED_ORIGIN}`);
  line(`  date    ${escaped(v.date)} (${v.ageDays} days ago)`);
  line(`  source  ${escaped(v.source)}`);
  line();
  printTable([
    ['KIND', 'NAME', 'FROM', 'UNTIL'],
    ...v.authorities.map((a) => [a.kind, escaped(a.name), escaped(a.start), `${a.end === null ? 'open' : escaped(a.end)}${a.state === 'ended' ? '  (ended)' : a.state === 'not yet' ? '  (not yet valid)' : ''}`]),
  ]);
  if (v.old) {
    line();
    line(`This trust root is ${v.ageDays} days old (more than ${OLD_AFTER_DAYS}): ${OLD_ADVICE}.`);
  }
  return 0;
}

export interface TrustRootUpdateOptions {
  from?: string;
  mirror?: string;
}

/** The authorities one root has that the other has not (by kind, name and window). */
function added(from: TrustRoot, to: TrustRoot): Authority[] {
  const key = (a: Authority): string => `${a.kind}\0${a.name}\0${a.start}\0${a.end ?? ''}\0${a.key}`;
  const before = new Set(authoritiesOf(from.data).map(key));
  return authoritiesOf(to.data).filter((a) => !before.has(key(a)));
}

export async function trustRootUpdate(homeFlag: string | undefined, opts: TrustRootUpdateOptions): Promise<number> {
  const paths = resolveHome(homeFlag);
  openHome(paths, false);
  if (opts.from !== undefined && opts.mirror !== undefined) throw new WardenError('USAGE', '--from and --mirror do not go together: --from reads a file, --mirror names where to fetch from.');
  const mirror = opts.mirror ?? TUF_MIRROR;
  if (!/^https?:\/\/[^/]/.test(mirror)) throw new WardenError('USAGE', `--mirror ${mirror} is not an http(s) URL; give the base URL of a mirror of the sigstore TUF repository.`);
  const now = new Date();
  // An insecure trust-root.json is refused before anything else; an invalid one only if this update needs it.
  const before = currentTrustRoot(paths);
  let change;
  if (opts.from !== undefined) {
    const input = readTrustRootInput(opts.from);
    trustRootFromInput(input, before.root?.data, now, before.invalid); // refused here: nothing written
    change = await updateTrustRoot(paths, (current) => trustRootFromInput(input, current.root?.data, now, current.invalid));
    if (input.kind === 'trusted_root.json') line('Replaced the sigstore trusted root; kept the npm attestation keys of the previous root.');
    else if (input.kind === 'keys.json') line('Replaced the npm attestation keys; kept the sigstore trusted root of the previous root.');
    else line('Replaced the whole trust root (its own date kept: when its material was taken).');
  } else {
    const data = await withTufCache(paths, (dir) => fetchTrustRoot(dir, mirror, now));
    change = await updateTrustRoot(paths, () => data);
    line('Fetched trusted_root.json and registry.npmjs.org/keys.json through TUF.');
  }
  const { root, sha256 } = change;
  const previous = change.previous.root;
  await appendAudit(paths.audit, { event: 'trust_root_updated', source: root.data.source, date: root.data.date, sha256, ...(previous ? { previousSource: previous.data.source, previousDate: previous.data.date } : {}) });
  line(`Wrote ${paths.trustRoot} (sha256 ${sha256}).`);
  if (previous) line(`  was  ${escaped(previous.data.date)}  ${previous.origin === SHIPPED_ORIGIN ? '(shipped) ' : ''}${escaped(previous.data.source)}`);
  else line(`  was  an invalid trust-root.json (${change.previous.invalid?.code})`);
  line(`  now  ${escaped(root.data.date)}  ${escaped(root.data.source)}`);
  if (previous) {
    const gained = added(previous, root);
    const lost = added(root, previous);
    for (const a of gained) line(`  + ${a.kind} ${escaped(a.name)} from ${escaped(a.start)}${a.end ? ` until ${escaped(a.end)}` : ''} (key sha256:${a.key.slice(0, 16)}…)`);
    for (const a of lost) line(`  - ${a.kind} ${escaped(a.name)} from ${escaped(a.start)}${a.end ? ` until ${escaped(a.end)}` : ''} (key sha256:${a.key.slice(0, 16)}…)`);
    if (gained.length === 0 && lost.length === 0) line('  (the same authorities as before)');
    if (new Date(root.data.date) < new Date(previous.data.date)) line(`Note: this root is dated before the one it replaced (${previous.data.date}).`);
  }
  const ageDays = Math.floor((now.getTime() - new Date(root.data.date).getTime()) / DAY_MS);
  if (ageDays > OLD_AFTER_DAYS) line(`Note: this root is ${ageDays} days old (more than ${OLD_AFTER_DAYS}): ${OLD_ADVICE}.`);
  return 0;
}
