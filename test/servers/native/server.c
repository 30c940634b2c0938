/* A minimal stdio MCP server in C that needs a shared library (libwl.so, found through DT_RUNPATH=$ORIGIN/lib)
   and says on stderr which build of it runs ("library native-v1"): the warden must attest the library as it
   attests the executable (test/attack37). Its surface does not depend on the library. It answers initialize, tools/list (one tool), tools/call (an isError result) and ping; any other request gets
   "method not found"; notifications are ignored. Ids are copied as the raw lexeme. */
#include <stdio.h>
#include <string.h>

const char *wl_name(void);

static char line[1 << 20];

/* The raw lexeme after "key": in line (a string with its quotes, or up to , or }), or "" when absent. */
static void lexeme(const char *key, char *out, size_t max) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(line, pat);
  out[0] = 0;
  if (!p) return;
  p += strlen(pat);
  while (*p == ' ') p++;
  size_t n = 0;
  if (*p == '"') {
    out[n++] = *p++;
    while (*p && *p != '"' && n < max - 2) out[n++] = *p++;
    out[n++] = '"';
  } else {
    while (*p && *p != ',' && *p != '}' && n < max - 1) out[n++] = *p++;
  }
  out[n] = 0;
}

int main(void) {
  char id[256], method[256], version[64];
  fprintf(stderr, "library %s\n", wl_name());
  while (fgets(line, sizeof line, stdin)) {
    lexeme("id", id, sizeof id);
    lexeme("method", method, sizeof method);
    if (!id[0] || !method[0]) continue;
    if (!strcmp(method, "\"initialize\"")) {
      lexeme("protocolVersion", version, sizeof version);
      printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":%s,\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"native\",\"version\":\"1\"}}}\n", id, version[0] ? version : "\"2025-06-18\"");
    } else if (!strcmp(method, "\"tools/list\"")) {
      printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"whoami\",\"description\":\"Says which library answered.\",\"inputSchema\":{\"type\":\"object\"}}]}}\n", id);
    } else if (!strcmp(method, "\"tools/call\"")) {
      printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"no such tool\"}],\"isError\":true}}\n", id);
    } else if (!strcmp(method, "\"ping\"")) {
      printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", id);
    } else {
      printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n", id);
    }
    fflush(stdout);
  }
  return 0;
}
