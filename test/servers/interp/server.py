# A minimal MCP server in python for tests of interpreter command lines (`python3 server.py`): newline-delimited
# JSON-RPC on stdio, one tool (echo). Standard library only.
import json
import sys


def answer(msg_id, result=None, error=None):
    out = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        out["error"] = error
    else:
        out["result"] = result
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()


TOOLS = [{"name": "echo", "description": "Echoes its input", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]

sys.stderr.write("python server: ready\n")
sys.stderr.flush()
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        answer(msg["id"], {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "python-fixture", "version": "1.0.0"}})
    elif method == "tools/list":
        answer(msg["id"], {"tools": TOOLS})
    elif method == "tools/call":
        name = params.get("name")
        if name == "echo":
            answer(msg["id"], {"content": [{"type": "text", "text": "Echo: " + str((params.get("arguments") or {}).get("message", ""))}]})
        else:
            answer(msg["id"], {"isError": True, "content": [{"type": "text", "text": "Unknown tool: " + str(name)}]})
    elif method == "ping":
        answer(msg["id"], {})
    else:
        answer(msg["id"], error={"code": -32601, "message": "Method not found: " + str(method)})
