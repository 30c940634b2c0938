import fs from 'node:fs';

// The version of mcp-warden: `mcp-warden --version` prints it and the daemon's build_info metric labels it.

/** The version in package.json ('../..' is the package root from dist/daemon/, dist/bundle/ and src/daemon/). */
export function wardenVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version.slice(0, 64) : 'unknown';
  } catch {
    return 'unknown';
  }
}
