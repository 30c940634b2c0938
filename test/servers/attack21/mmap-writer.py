# Writes a file through a shared mapping, as a program that maps its file does (a hex editor, a database, an
# mmap-based editor). Commands, one a line on stdin:
#   dirty  stores every page's own bytes back (the first store to a clean page is what updates mtime and ctime),
#          then prints "ready";
#   go     stores NEW_BYTE at OFFSET (a store to a page that is already dirty updates no timestamp), prints "done";
#   undo   stores the byte that was at OFFSET first, prints "undone".
# Stdin's end closes the mapping.
import mmap, os, sys

path, offset, new_byte = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDWR)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
old_byte = m[offset]
for line in sys.stdin:
    cmd = line.strip()
    if cmd == 'dirty':
        for at in range(0, size, mmap.PAGESIZE):
            m[at] = m[at]
        print('ready', flush=True)
    elif cmd == 'go':
        m[offset] = new_byte
        print('done', flush=True)
    elif cmd == 'undo':
        m[offset] = old_byte
        print('undone', flush=True)
m.close()
os.close(fd)
