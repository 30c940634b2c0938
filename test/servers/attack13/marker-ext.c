/* A shared library (also a valid SQLite extension) whose constructor appends "native ran" to MARKER, a path
   given at compile time: it shows native code from outside the attested set ran in the server's process. */
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void ran(void) {
  int fd = open(MARKER, O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (fd >= 0) {
    (void)!write(fd, "native ran\n", 11);
    close(fd);
  }
}
int sqlite3_extension_init(void *db, char **err, const void *api) { (void)db; (void)err; (void)api; return 0; }
