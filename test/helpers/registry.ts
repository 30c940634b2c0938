import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './warden.js';

// Tests that install packages (`import --install`) get them from a loopback stand-in for the npm registry
// (registry-server.mjs) serving what `npm ci` already put in node_modules, so the suite needs no network; tests of
// `install` add a catalog of fixture packages with their attestations (provenance-registry.ts writes it).
// `MCP_WARDEN_TEST_REGISTRY=1` turns on the one test that installs from the real registry instead.

/** True when the opt-in test against the real npm registry should run. */
export const REAL_REGISTRY = process.env.MCP_WARDEN_TEST_REGISTRY === '1';

export interface LocalRegistry {
  url: string;
  /**
   * `base` with npm pointed at this registry only: every inherited npm_config_* dropped (`npm test` exports the
   * user's config file, cache and registry settings), a user config of the test's own, a cache in the test's
   * directory, no proxy for loopback, no update check.
   */
  npmEnv(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** The requests served so far, one "METHOD /path STATUS" each. */
  requests(): string[];
  close(): Promise<void>;
}

export interface LocalRegistryOptions {
  /** A catalog file (registry-server.mjs says its shape), read again on every request; its packages win over
   *  node_modules ones of the same name. */
  catalog?: string;
}

/** Starts the stand-in registry; `dir` (the test's temporary directory) receives its npm config, cache and log. */
export async function startLocalRegistry(dir: string, options: LocalRegistryOptions = {}): Promise<LocalRegistry> {
  const log = path.join(dir, 'registry-requests.log');
  const npmrc = path.join(dir, 'npmrc');
  fs.writeFileSync(npmrc, '');
  fs.writeFileSync(log, '');
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'registry-server.mjs'), path.join(ROOT, 'node_modules'), log, ...(options.catalog ? ['--catalog', options.catalog] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { url: string }).url);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`the local registry stand-in exited (${code ?? signal}) before listening`)));
  });
  return {
    url,
    npmEnv(base = process.env) {
      const env = Object.fromEntries(Object.entries(base).filter(([k]) => !/^npm_config_/i.test(k)));
      return {
        ...env,
        npm_config_registry: `${url}/`,
        npm_config_userconfig: npmrc,
        npm_config_cache: path.join(dir, 'npm-cache'),
        npm_config_noproxy: '127.0.0.1',
        npm_config_update_notifier: 'false',
      };
    },
    requests: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean),
    async close() {
      child.stdin.end(); // it exits when its stdin closes
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
