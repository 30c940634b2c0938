import fs from 'node:fs';
import path from 'node:path';
import { INSTALL_ROOT } from '../launch/module-guard.js';
import * as v from 'valibot';
import { matchAllowlist } from '../attest/match.js';
import { planLaunch } from '../attest/plan.js';
import { appendAudit } from '../audit/log.js';
import { WardenError } from '../error.js';
import { allowlistFileSchema, updateAllowlist, upsertEntry } from '../store/allowlist.js';
import { loadDigestCache, saveDigestCache } from '../store/digest-cache-file.js';
import { loadJsonFile } from '../store/json-file.js';
import type { HomePaths } from '../store/paths.js';
import { loadLocks } from '../store/locks.js';
import { loadServers, newServerConfig, updateServers } from '../store/servers.js';
import { captureLock } from '../supervise/capture-lock.js';

// The embedded default's enrollment, for `npm start`: the reference server-everything (a dev dependency of this
// checkout), pinned by the checkout's allowlist.json (paths relative to the checkout), with this machine's node
// interpreter enrolled on first use, loudly, and recorded as trust-on-first-use.

/** This checkout. */
export const CHECKOUT = INSTALL_ROOT;
export const SERVER_ID = 'everything';
const SCRIPT = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';

/** The checkout's allowlist.json: the allowlist format, with paths relative to the checkout. */
function checkoutAllowlist(): v.InferOutput<typeof allowlistFileSchema>['entries'] {
  const schema = v.strictObject({ ...allowlistFileSchema.entries, entries: v.array(v.strictObject({ ...allowlistFileSchema.entries.entries.item.entries, path: v.string() })) });
  const file = loadJsonFile(path.join(CHECKOUT, 'allowlist.json'), 'the checkout allowlist.json', schema, false);
  return (file?.entries ?? []).map((e) => ({ ...e, path: path.resolve(CHECKOUT, e.path) }));
}

/** Enrolls server-everything in `paths` as far as it is not yet: servers.json entry, the checkout's pins, this
 *  machine's node (trust on first use), its lock. Says each step it takes. */
export async function ensureEnrolled(paths: HomePaths, say: (s: string) => void): Promise<void> {
  const wrote = await updateServers(paths, (config) => {
    if (Object.hasOwn(config.servers, SERVER_ID)) return false;
    config.servers[SERVER_ID] = newServerConfig({ command: process.execPath, args: [path.join(CHECKOUT, SCRIPT), 'stdio'] });
    return true;
  });
  if (wrote) say(`Wrote server '${SERVER_ID}' to ${paths.servers}`);
  const pinnedByCheckout = checkoutAllowlist();
  await updateAllowlist(paths, (allowlist) => {
    for (const pinned of pinnedByCheckout) {
      if (upsertEntry(allowlist, pinned).action !== 'unchanged') say(`Pinned by the checkout: ${pinned.kind} ${pinned.path}\n  sha256 ${pinned.sha256}`);
    }
  });
  const config = loadServers(paths);
  const server = Object.hasOwn(config.servers, SERVER_ID) ? config.servers[SERVER_ID] : undefined;
  if (!server) throw new WardenError('SERVER_UNKNOWN', `server '${SERVER_ID}' vanished from ${paths.servers}`);
  const cache = loadDigestCache(paths, SERVER_ID);
  const plan = await planLaunch({ serverId: SERVER_ID, command: server.command, args: server.args, cwd: server.cwd, trustedPath: config.path, modules: server.modules }, cache);
  saveDigestCache(paths, SERVER_ID, cache);
  const interpreter = fs.realpathSync(process.execPath);
  const enrolled = await updateAllowlist(paths, (allowlist) => {
    const out = [];
    for (const verdict of matchAllowlist(plan.artifacts, allowlist.entries).verdicts) {
      const a = verdict.artifact;
      if (verdict.state !== 'not_allowlisted' || a.kind !== 'executable' || a.path !== interpreter) continue;
      upsertEntry(allowlist, { path: a.path, kind: a.kind, sha256: a.sha256, addedAt: new Date().toISOString(), note: 'the node interpreter of this machine, enrolled by npm start', trustOnFirstUse: true });
      out.push(a);
    }
    return out;
  });
  for (const a of enrolled) {
    await appendAudit(paths.audit, { event: 'allowlist_changed', action: 'add', path: a.path, kind: a.kind, sha256: a.sha256, trustOnFirstUse: true, by: 'npm start' });
    say('');
    say('TRUST ON FIRST USE: this machine\'s node interpreter was not allowlisted. Enrolling it as it is now:');
    say(`  executable ${a.path}\n  sha256     ${a.sha256}`);
    say('  Recorded in the allowlist (trustOnFirstUse: true) and the audit log. Compare the digest with your');
    say('  distribution\'s package (e.g. dpkg -V nodejs) if this machine may already be compromised.');
    say('');
  }
  if (!loadLocks(paths).tools.has(SERVER_ID)) {
    const entry = await captureLock(paths, SERVER_ID, 'lock');
    say(`LOCKED ON FIRST USE: the tool surface of '${SERVER_ID}' as served now: ${entry.tools.length} tools, surface ${entry.surface_hash}`);
    say(`  in ${paths.toolsLock}; every later session is verified against it in-band.`);
    say('');
  }
}
