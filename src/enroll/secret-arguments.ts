import { WardenError } from '../error.js';
import { printable } from '../escape.js';

// Arguments that look like credentials, refused at enrollment: a server's arguments are recorded in tools.lock
// (`args`), a file meant to be committed, and in the audit log. A key belongs in the server's environment:
// `--env NAME` passes the client's value through (nothing stored), `--env NAME=VALUE` keeps it in servers.json
// (the warden's home, never committed by the warden). Three shapes are recognised, none of them by guessing at
// arbitrary text:
//   a flag named for a secret with a value: --token=…, --api-key …, --access_token=…, -password …
//     (not one naming where a secret is: --token-file, --api-key-env, --secret-path);
//   an assignment to a variable named for a secret: OPENAI_API_KEY=…, GITHUB_TOKEN=…, DB_PASSWORD=…;
//   a value with the prefix of a well-known token format (GitHub, GitLab, Slack, OpenAI, Stripe, AWS, Google).

const SECRET_WORDS = ['token', 'secret', 'password', 'passwd', 'apikey', 'accesskey', 'privatekey', 'credential', 'bearer', 'clientsecret'];
const POINTER_ENDINGS = ['file', 'path', 'dir', 'env', 'var', 'name', 'url', 'endpoint', 'type', 'mode'];
const SECRET_VARIABLE = /^[A-Za-z][A-Za-z0-9_]*_(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PAT|CREDENTIALS?)$/i;
const TOKEN_PREFIX = /^(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|sk-[A-Za-z0-9]|sk_live_|rk_live_|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30})/;

function secretFlag(name: string): boolean {
  const words = name.toLowerCase().split(/[-_.]+/).filter(Boolean);
  const joined = words.join('');
  if (!SECRET_WORDS.some((w) => joined.includes(w))) return false;
  return !POINTER_ENDINGS.includes(words[words.length - 1] ?? '');
}

export interface SecretArgument {
  /** 0-based index in the arguments. */
  index: number;
  /** The argument as shown: its name, never its value. */
  shown: string;
}

/** The first argument that looks like a credential, or undefined. */
export function secretArgument(args: readonly string[]): SecretArgument | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const head = eq < 0 ? arg : arg.slice(0, eq);
    const value = eq < 0 ? undefined : arg.slice(eq + 1);
    if (TOKEN_PREFIX.test(arg) || (value !== undefined && TOKEN_PREFIX.test(value))) return { index: i, shown: eq < 0 ? '(a value in the form of a known token)' : `${head}=…` };
    const flag = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/.exec(head);
    if (flag && secretFlag(flag[1] as string)) {
      if (value !== undefined && value !== '') return { index: i, shown: `${head}=…` };
      const next = args[i + 1];
      if (eq < 0 && next !== undefined && !next.startsWith('-')) return { index: i, shown: `${head} …` };
    }
    if (value !== undefined && value !== '' && SECRET_VARIABLE.test(head)) return { index: i, shown: `${head}=…` };
  }
  return undefined;
}

/** Refuses to enroll server `id` with an argument that looks like a credential (nothing is written). */
export function refuseSecretArguments(id: string, args: readonly string[]): void {
  const found = secretArgument(args);
  if (!found) return;
  throw new WardenError(
    'SECRET_IN_ARGUMENTS',
    `server '${id}': argument ${found.index + 1} (${printable(found.shown)}) looks like a credential, and a server's arguments are recorded in tools.lock, a file meant to be committed. Nothing was added. Give the key through the environment instead, if the server reads one (see its documentation): --env NAME passes the client's value through, --env NAME=VALUE keeps it in servers.json.`,
  );
}
