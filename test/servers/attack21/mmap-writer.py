# Writes a file through a shared mapping, as a program that maps its file does (a hex editor, a database, an
# mmap-based editor): first stores every page's own bytes back (the first store to a clean page is what updates
# mtime and ctime), prints "ready", and on a line of stdin stores NEW_BYTE at OFFSET, then prints "done" and
# waits for stdin to close. A store to a page that is already dirty updates no timestamp.
import mmap, os, sys

path, offset, new_byte = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDWR)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
for at in range(0, size, mmap.PAGESIZE):
    m[at] = m[at]
print('ready', flush=True)
sys.stdin.readline()
m[offset] = new_byte
print('done', flush=True)
sys.stdin.read()
m.close()
os.close(fd)
