/*
 * An attested executable named "node" that is a wrapper: each time it is run it appends its arguments (one line,
 * separated by spaces) to LOG_PATH, then answers `--version` itself ("v20.20.2") or runs REAL_NODE with the same
 * arguments. It shows which runs of the interpreter the warden makes: its launches of the server, and nothing
 * else (test/launch/node-release-read.test.ts). Built with -DLOG_PATH="..." -DREAL_NODE="...".
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  FILE *log = fopen(LOG_PATH, "a");
  if (log) {
    for (int i = 1; i < argc; i++) fprintf(log, i > 1 ? " %s" : "%s", argv[i]);
    fputc('\n', log);
    fclose(log);
  }
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    puts("v20.20.2");
    return 0;
  }
  argv[0] = REAL_NODE;
  execv(REAL_NODE, argv);
  return 127;
}
