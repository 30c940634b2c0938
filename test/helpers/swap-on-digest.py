# A substitution that races the warden on its own, with nothing in the warden to help it: watches FILE with
# inotify and, the moment the K-th open of FILE is closed without a write (IN_CLOSE_NOWRITE: the warden has just
# finished reading it to digest it), swaps it:
#   swap-on-digest.py FILE K rename SRC   renames SRC over FILE (a new inode at the digested path)
#   swap-on-digest.py FILE K append       appends one zero byte to FILE in place (same inode, new size and ctime)
# Prints {"ready": true} once the watch is in place (start the warden only then), then one line with the outcome:
# {"swapped": true, "opens": K, "ms": <time from the K-th open to the swap>}, or {"swapped": false, "error": ...}
# when the swap itself failed (e.g. ETXTBSY: the file was being executed already), or {"swapped": false,
# "timeout": true, "opens": n} when the K-th open never closed within 30 s. It never
# opens FILE before it swaps. Node's fs.watch cannot see opens and closes, hence python's ctypes.
import ctypes, ctypes.util, errno, json, os, select, struct, sys, time

IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE = 0x001, 0x020, 0x010
IN_IGNORED, IN_Q_OVERFLOW = 0x8000, 0x4000

path, k, action = sys.argv[1], int(sys.argv[2]), sys.argv[3]
src = sys.argv[4] if action == "rename" else None
timeout = 30.0

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
if fd < 0:
    sys.exit(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
if libc.inotify_add_watch(fd, path.encode(), IN_OPEN | IN_CLOSE_NOWRITE) < 0:
    sys.exit(f"inotify_add_watch {path}: {os.strerror(ctypes.get_errno())}")


def say(obj):
    print(json.dumps(obj), flush=True)


def swap():
    if action == "rename":
        os.rename(src, path)
    elif action == "append":
        with open(path, "ab") as f:
            f.write(b"\0")
    else:
        raise SystemExit(f"unknown action {action}")


say({"ready": True})
opens = 0
opened_at = None
deadline = time.monotonic() + timeout
while True:
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        say({"swapped": False, "timeout": True, "opens": opens})
        sys.exit(0)
    buf = os.read(fd, 65536)
    off = 0
    while off < len(buf):
        _wd, mask, _cookie, length = struct.unpack_from("iIII", buf, off)
        off += 16 + length
        if mask & IN_Q_OVERFLOW:
            say({"swapped": False, "error": "inotify queue overflow"})
            sys.exit(0)
        if mask & IN_OPEN:
            opens += 1
            if opens == k:
                opened_at = time.monotonic()
        if mask & IN_CLOSE_NOWRITE and opens >= k:
            try:
                swap()
            except OSError as e:
                say({"swapped": False, "error": errno.errorcode.get(e.errno, str(e.errno)), "opens": opens})
                sys.exit(0)
            say({"swapped": True, "opens": opens, "ms": round((time.monotonic() - opened_at) * 1000, 3)})
            sys.exit(0)
