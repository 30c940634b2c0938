import { WardenError } from '../error.js';
import { ENV_NAME_RE, loaderVariable } from '../store/servers.js';

// --env and --pass-env of add and install: the server's environment, by name. A value given here is kept in
// servers.json (the warden's home); a name alone is passed through from the client's environment at each launch,
// so the key is stored nowhere by the warden.

function checkedName(flag: string, spec: string, name: string): string {
  if (!ENV_NAME_RE.test(name)) throw new WardenError('USAGE', `${flag} ${spec}: '${name}' is not an environment variable name.`);
  const loader = loaderVariable(name);
  if (loader) throw new WardenError('LOADER_VARIABLE', `${flag} ${name}: ${name} is ${loader}; the warden refuses it (docs/formats.md lists them). Nothing was added; run the command again without it.`);
  return name;
}

/** Splits --env NAME=VALUE (a value set for the server) from --env NAME and --pass-env NAME (passed through). */
export function envOptions(specs: readonly string[], passThrough: readonly string[] = []): { env: Record<string, string>; passEnv: string[] } {
  const env: Record<string, string> = {};
  const passEnv: string[] = [];
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    const name = checkedName('--env', spec, eq < 0 ? spec : spec.slice(0, eq));
    if (eq < 0) passEnv.push(name);
    else env[name] = spec.slice(eq + 1);
  }
  for (const name of passThrough) passEnv.push(checkedName('--pass-env', name, name));
  return { env, passEnv };
}
