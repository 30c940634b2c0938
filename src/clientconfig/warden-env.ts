// The variables the warden process itself reads. A client entry's "env" is the environment the client starts
// the warden with, not only the server's: a hostile project's entry that sets MCP_WARDEN_HOME, XDG_CONFIG_HOME
// or HOME would move the warden to a home it shipped (its own allowlist and lock), and one that sets
// NODE_TLS_REJECT_UNAUTHORIZED, NODE_EXTRA_CA_CERTS, a proxy or HOSTALIASES would steer where its webhook alerts
// go. `import` takes these out of the client's entry and sets them for the server in servers.json, so the
// server still gets them and the warden never does (docs/adr/0040-client-entry-env-is-the-wardens.md).
//
// By family, not by the names known today: node and the libraries under it add variables in new versions.
//   the warden's own:  MCP_WARDEN_*; where it finds its home: HOME, XDG_* (XDG_CONFIG_HOME)
//   node and libuv:    NODE_* (the loader ones are refused outright: store/servers.ts), UV_*
//   TLS:               OPENSSL_*, SSL_CERT_FILE, SSL_CERT_DIR (and the rest of SSL_*)
//   the network:       HTTP_PROXY, HTTPS_PROXY, NO_PROXY, ALL_PROXY in either case (node's fetch with
//                      NODE_USE_ENV_PROXY), HOSTALIASES, LOCALDOMAIN, RES_OPTIONS (glibc's resolver)
//   temporary files:   TMPDIR, TMP, TEMP (node's os.tmpdir)
//   systemd:           NOTIFY_SOCKET, WATCHDOG_* (the daemon's sd_notify), JOURNAL_STREAM
// Not here: what a verb run by the user (not by a client) reads: npm_config_* (npm runs in install, upgrade
// and import --install, never in run), GIT_*, SIGSTORE_ID_TOKEN; and data no code path of run acts on (TZ,
// LANG, LC_*).

const NAMES = new Set(['HOME', 'TMPDIR', 'TMP', 'TEMP', 'HOSTALIASES', 'LOCALDOMAIN', 'RES_OPTIONS', 'NOTIFY_SOCKET', 'JOURNAL_STREAM']);
const PREFIXES = ['MCP_WARDEN_', 'XDG_', 'NODE_', 'UV_', 'OPENSSL_', 'SSL_', 'WATCHDOG_'];
const PROXIES = new Set(['http_proxy', 'https_proxy', 'no_proxy', 'all_proxy']);

/** Whether the warden process reads `name` itself (names compare exactly, as Linux does; proxies in either case). */
export function isWardenVariable(name: string): boolean {
  return NAMES.has(name) || PREFIXES.some((p) => name.startsWith(p)) || PROXIES.has(name.toLowerCase());
}
