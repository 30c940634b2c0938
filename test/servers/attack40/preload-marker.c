/* A shared library for /etc/ld.so.preload: its constructor appends the command line of every process the loader
   puts it in (NULs as spaces) to MARKER, a path given at compile time, so a test can tell which process ran it. */
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void ran(void) {
  char buf[4096];
  int in = open("/proc/self/cmdline", O_RDONLY);
  if (in < 0) return;
  ssize_t n = read(in, buf, sizeof buf - 1);
  close(in);
  if (n <= 0) return;
  for (ssize_t i = 0; i < n; i++) if (buf[i] == '\0') buf[i] = ' ';
  buf[n] = '\n';
  int fd = open(MARKER, O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (fd >= 0) {
    (void)!write(fd, buf, (size_t)n + 1);
    close(fd);
  }
}
