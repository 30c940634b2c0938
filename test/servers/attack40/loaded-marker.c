/* A shared object whose constructor appends NAME to MARKER (both given at compile time): it shows that ld.so
   loaded it into a process. It is also an rtld-audit module (la_version), so it can be named by DT_AUDIT. */
#include <fcntl.h>
#include <unistd.h>
static void mark(const char *s) {
  int fd = open(MARKER, O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (fd >= 0) {
    (void)!write(fd, s, __builtin_strlen(s));
    close(fd);
  }
}
__attribute__((constructor)) static void ran(void) { mark(NAME "\n"); }
unsigned int la_version(unsigned int v) { return v; }
