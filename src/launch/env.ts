// The server's environment is built, not inherited: PATH (the trusted one), HOME and TMPDIR, then the values
// servers.json sets, then the names it passes through from the warden's own environment. Nothing else: a
// secret in the warden's environment never reaches a server that was not given it by name.

export interface EnvSpec {
  trustedPath: string;
  env: Record<string, string>;
  passEnv: string[];
}

/** The server's environment, and the names in it (the audit log records names, never values). */
export function buildEnv(spec: EnvSpec, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = { PATH: spec.trustedPath };
  if (from.HOME) out.HOME = from.HOME;
  out.TMPDIR = from.TMPDIR ?? '/tmp';
  for (const [k, v] of Object.entries(spec.env)) out[k] = v;
  for (const name of spec.passEnv) {
    const v = from[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}
