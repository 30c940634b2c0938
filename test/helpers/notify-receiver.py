# A stand-in for systemd's notification socket: binds an AF_UNIX datagram socket at argv[1] and prints each
# datagram as a JSON line with the sender's pid from SCM_CREDENTIALS (systemd's NotifyAccess=main drops
# datagrams whose sender is not the service's main pid), and `t`, the receiver's monotonic clock in seconds when
# the datagram was taken off the socket (for spacing between datagrams). Node cannot bind such a socket itself.
# The "ready" line is printed once the socket is bound and passes credentials: wait for it, not for the file.
import json, os, socket, struct, sys, time

path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
print(json.dumps({"ready": path}), flush=True)
while True:
    data, anc, _flags, _addr = s.recvmsg(4096, socket.CMSG_SPACE(12))
    t = time.monotonic()
    pid = None
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid, _uid, _gid = struct.unpack("iII", payload[:12])
    print(json.dumps({"pid": pid, "data": data.decode("utf-8", "replace"), "t": t}), flush=True)
