# The python counterpart of cgroup-at-start.mjs: a server that is not held at a gate (it is no node script) must
# be born in its session's cgroup. Writes the "0::" line of /proc/self/cgroup to FILE, then answers initialize and
# tools/list. Standard library only. Usage: cgroup-at-start.py FILE
import json
import sys

with open("/proc/self/cgroup") as f:
    own = next((line[3:].strip() for line in f if line.startswith("0::")), "")
with open(sys.argv[1], "w") as f:
    f.write(own + "\n")

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "cgroup-at-start", "version": "1.0.0"}}
    else:
        result = {"tools": []}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
