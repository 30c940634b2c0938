# A python MCP server whose stdin is read as the official python SDK reads it (mcp/server/stdio.py:
# `TextIOWrapper(sys.stdin.buffer, encoding="utf-8")`, then `for line in stdin`): a TextIOWrapper left at its
# default newline=None reads with universal newlines, so a bare "\r" ends a line as "\n" does. Lines that are
# not JSON are skipped, as the SDK skips what fails validation. Standard library only.
# TOOLS_FILE (re-read at every tools/list): a JSON list of tool names. CALL_LOG: every tool run is appended.
import io
import json
import os
import sys

stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")


def answer(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def tools():
    with open(os.environ["TOOLS_FILE"]) as f:
        names = json.load(f)
    return [{"name": n, "description": n + " tool", "inputSchema": {"type": "object"}} for n in names]


for line in stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        answer(msg["id"], {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "universal-newlines", "version": "1.0.0"}})
    elif method == "tools/list":
        answer(msg["id"], {"tools": tools()})
    elif method == "tools/call":
        name = str(params.get("name"))
        with open(os.environ["CALL_LOG"], "a") as log:
            log.write(name + "\n")
        answer(msg["id"], {"content": [{"type": "text", "text": "ran " + name}]})
    elif method == "ping":
        answer(msg["id"], {})
